"""The project's version, as the root pom.xml states it, in PEP 440 form (used by the build backend,
and by the package when it runs from the checkout, where no version file was written)."""
from __future__ import annotations

import os
import re
import xml.etree.ElementTree as ET

_MAVEN = re.compile(r"^(\d+(?:\.\d+)*)(?:-(SNAPSHOT|alpha-?(\d+)|beta-?(\d+)|rc-?(\d+)))?$", re.IGNORECASE)


def pep440_version(maven_version: str) -> str:
    """``0.1.0-SNAPSHOT`` -> ``0.1.0.dev0``, ``1.2.0`` -> ``1.2.0``, ``1.0-rc1`` -> ``1.0rc1``; anything
    else raises ValueError naming the version and the forms allowed."""
    match = _MAVEN.match(maven_version.strip())
    if not match:
        raise ValueError("the project version %r has no PEP 440 form: use N.N.N with an optional -SNAPSHOT, -alphaN,"
                         " -betaN or -rcN" % maven_version)
    release, qualifier, alpha, beta, rc = match.groups()
    if qualifier is None:
        return release
    if qualifier.upper() == "SNAPSHOT":
        return release + ".dev0"
    if alpha is not None:
        return release + "a" + alpha
    if beta is not None:
        return release + "b" + beta
    return release + "rc" + rc


def pom_version(pom_path: str) -> str:
    """The ``<version>`` of the project that ``pom_path`` describes, in PEP 440 form."""
    root = ET.parse(pom_path).getroot()
    ns = {"m": "http://maven.apache.org/POM/4.0.0"}
    element = root.find("m:version", ns)
    if element is None or not (element.text or "").strip():
        raise ValueError("%s has no <version> of its own" % pom_path)
    return pep440_version(element.text)


def checkout_pom() -> str:
    """The root pom.xml of the checkout that holds this file (clients/python/kvtier/../../../pom.xml)."""
    return os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, os.pardir, os.pardir,
                                         "pom.xml"))
