#!/bin/sh
# cargo's runner for test binaries when scripts/test.sh runs as root: the binaries named in
# CP_UNPRIVILEGED_TESTS (target names, e.g. `agents`) run as the user CP_TEST_USER, with
# that user's HOME, a trust store of its own (CP_TEST_CONFIG_HOME) and no runtime directory
# of root's; every other binary runs as it is.
#
#   scripts/test-runner.sh BINARY [ARGS…]
set -eu

binary=$1
name=$(basename "$binary")
# cargo names a test binary TARGET-HASH.
name=${name%-*}
case " ${CP_UNPRIVILEGED_TESTS:-} " in
  *" $name "*) ;;
  *) exec "$@" ;;
esac

user=${CP_TEST_USER:?CP_TEST_USER is not set}
home=$(getent passwd "$user" | cut -d: -f6)
config="$home/.config/cp-test-config"
setpriv --reuid="$user" --regid="$user" --init-groups mkdir -p "$config"
exec setpriv --reuid="$user" --regid="$user" --init-groups \
  env -u XDG_RUNTIME_DIR -u XDG_CONFIG_HOME -u XDG_CACHE_HOME -u GEMINI_CLI_HOME \
  HOME="$home" USER="$user" LOGNAME="$user" CP_TEST_CONFIG_HOME="$config" \
  "$@"
