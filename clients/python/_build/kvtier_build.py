"""The kvtier package's PEP 517 build backend: standard library only, so that pip builds the wheel
with no index and with its default build isolation.

The wheel holds the ``kvtier`` package and ``kvtier_client.py``, the C client library copied from
``clients/c/build`` (the install fails, saying how to build it, when it is not there), and
``kvtier/_version.py`` with the project's version from the root pom.xml in PEP 440 form. It is
tagged for this platform, since it carries a native library.
"""
import base64
import hashlib
import importlib.util
import os
import sysconfig
import zipfile

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # clients/python
PACKAGE = os.path.join(HERE, "kvtier")
LIBRARY = os.path.normpath(os.path.join(HERE, os.pardir, "c", "build", "libkvtier_client.so"))
NAME = "kvtier"


def _project():
    spec = importlib.util.spec_from_file_location("kvtier_project", os.path.join(PACKAGE, "_project.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _version():
    project = _project()
    pom = project.checkout_pom()
    if not os.path.exists(pom):
        raise RuntimeError("the project's pom.xml is not at %s: build the package from the kvtier checkout" % pom)
    return project.pom_version(pom)


def _tag():
    platform = sysconfig.get_platform().replace("-", "_").replace(".", "_")
    return "py3-none-" + platform


def _metadata(version):
    return ("Metadata-Version: 2.1\nName: %s\nVersion: %s\n"
            "Summary: Python client of kvtier, the node-local KV-cache page store: IPC binding and page keys\n"
            "Requires-Python: >=3.8\n" % (NAME, version)).encode()


def _wheel_file():
    return ("Wheel-Version: 1.0\nGenerator: kvtier_build\nRoot-Is-Purelib: false\nTag: %s\n" % _tag()).encode()


def _files(version):
    """(path in the wheel, bytes) for everything but the dist-info."""
    if not os.path.exists(LIBRARY):
        raise RuntimeError("the kvtier C client library is not built (%s is missing): run `./mvnw -pl clients -am package`"
                           " or `make -C clients/c` in the checkout first" % LIBRARY)
    out = []
    for folder, dirs, names in os.walk(PACKAGE):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(names):
            if name.endswith(".py") and name != "_version.py":
                path = os.path.join(folder, name)
                with open(path, "rb") as f:
                    out.append((os.path.relpath(path, HERE).replace(os.sep, "/"), f.read()))
    with open(os.path.join(HERE, "kvtier_client.py"), "rb") as f:
        out.append(("kvtier_client.py", f.read()))
    with open(LIBRARY, "rb") as f:
        out.append(("kvtier/libkvtier_client.so", f.read()))
    out.append(("kvtier/_version.py", ('"""Written by the build."""\nVERSION = "%s"\n' % version).encode()))
    return out


def _record_line(path, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return "%s,sha256=%s,%d" % (path, digest, len(data))


def _dist_info(version):
    return "%s-%s.dist-info" % (NAME, version)


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    version = _version()
    info = os.path.join(metadata_directory, _dist_info(version))
    os.makedirs(info, exist_ok=True)
    with open(os.path.join(info, "METADATA"), "wb") as f:
        f.write(_metadata(version))
    with open(os.path.join(info, "WHEEL"), "wb") as f:
        f.write(_wheel_file())
    return os.path.basename(info)


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    version = _version()
    files = _files(version)
    info = _dist_info(version)
    files.append((info + "/METADATA", _metadata(version)))
    files.append((info + "/WHEEL", _wheel_file()))
    files.append((info + "/top_level.txt", b"kvtier\nkvtier_client\n"))
    record = [_record_line(path, data) for path, data in files] + [info + "/RECORD,,"]
    files.append((info + "/RECORD", ("\n".join(record) + "\n").encode()))
    wheel_name = "%s-%s-%s.whl" % (NAME, version, _tag())
    with zipfile.ZipFile(os.path.join(wheel_directory, wheel_name), "w", zipfile.ZIP_DEFLATED) as wheel:
        for path, data in files:
            entry = zipfile.ZipInfo(path, date_time=(2020, 1, 1, 0, 0, 0))
            entry.external_attr = (0o755 if path.endswith(".so") else 0o644) << 16
            entry.compress_type = zipfile.ZIP_DEFLATED
            wheel.writestr(entry, data)
    return wheel_name
