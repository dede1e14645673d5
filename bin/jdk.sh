# Sourced by ./mvnw and ./kvtier (POSIX sh): picks a JDK that can build and run kvtier.
#
# Order: JAVA_HOME if it is new enough, else the newest JDK under /usr/lib/jvm
# (override the search root with KVTIER_JVM_DIR). On success JAVA_HOME is exported;
# on failure it prints what it checked and what is missing, and returns 1.

KVTIER_JAVA_REQUIRED=25

# Prints the feature version (25 for "25.0.3", 8 for "1.8.0_402") of the JDK at $1, or nothing.
kvtier_jdk_major() {
  _home=$1
  _version=""
  if [ -r "$_home/release" ]; then
    _version=$(sed -n 's/^JAVA_VERSION="\([^"]*\)".*/\1/p' "$_home/release" | head -n 1)
  fi
  if [ -z "$_version" ] && [ -x "$_home/bin/java" ]; then
    _version=$("$_home/bin/java" -version 2>&1 | sed -n 's/.*version "\([^"]*\)".*/\1/p' | head -n 1)
  fi
  case "$_version" in
    1.*) _version=${_version#1.} ;;
  esac
  _major=${_version%%[!0-9]*}
  [ -n "$_major" ] && printf '%s\n' "$_major"
}

# Succeeds when $1 is a full JDK (java and javac) of at least the required version.
kvtier_jdk_usable() {
  [ -x "$1/bin/java" ] && [ -x "$1/bin/javac" ] || return 1
  _m=$(kvtier_jdk_major "$1")
  [ -n "$_m" ] && [ "$_m" -ge "$KVTIER_JAVA_REQUIRED" ]
}

kvtier_select_jdk() {
  _checked=""
  if [ -n "${JAVA_HOME-}" ]; then
    if kvtier_jdk_usable "$JAVA_HOME"; then
      export JAVA_HOME
      return 0
    fi
    _checked="$_checked
  JAVA_HOME=$JAVA_HOME: $(kvtier_describe_jdk "$JAVA_HOME")"
  fi
  _best=""
  _best_major=0
  # ./mvnw runs with noglob (set -f); the search needs globbing.
  case $- in *f*) _restore_noglob=1; set +f ;; *) _restore_noglob=0 ;; esac
  for _candidate in "${KVTIER_JVM_DIR:-/usr/lib/jvm}"/*; do
    [ -d "$_candidate" ] || continue
    [ -L "$_candidate" ] && continue
    if kvtier_jdk_usable "$_candidate"; then
      _m=$(kvtier_jdk_major "$_candidate")
      if [ "$_m" -gt "$_best_major" ]; then
        _best=$_candidate
        _best_major=$_m
      fi
    else
      _checked="$_checked
  $_candidate: $(kvtier_describe_jdk "$_candidate")"
    fi
  done
  [ "$_restore_noglob" = 1 ] && set -f
  if [ -n "$_best" ]; then
    JAVA_HOME=$_best
    export JAVA_HOME
    return 0
  fi
  {
    echo "kvtier: no JDK $KVTIER_JAVA_REQUIRED or newer found (kvtier is compiled with --release $KVTIER_JAVA_REQUIRED and uses the FFM API)."
    if [ -n "$_checked" ]; then
      echo "Checked:$_checked"
    else
      echo "Checked: JAVA_HOME (not set) and ${KVTIER_JVM_DIR:-/usr/lib/jvm} (no JDKs there)."
    fi
    echo "Missing: a JDK $KVTIER_JAVA_REQUIRED+ with both bin/java and bin/javac."
    echo "Install one (for example Temurin $KVTIER_JAVA_REQUIRED: apt install temurin-$KVTIER_JAVA_REQUIRED-jdk, or unpack it under /usr/lib/jvm) or set JAVA_HOME to it."
  } >&2
  return 1
}

kvtier_describe_jdk() {
  if [ ! -x "$1/bin/java" ]; then
    echo "no bin/java"
  elif [ ! -x "$1/bin/javac" ]; then
    echo "Java $(kvtier_jdk_major "$1") runtime without bin/javac"
  else
    echo "JDK $(kvtier_jdk_major "$1"), too old"
  fi
}
