#!/bin/sh
# As in the official image: `docker run node:X -e '…'` or `… script.js` runs node with those arguments.
set -e
if [ "${1#-}" != "${1}" ] || [ -z "$(command -v "${1}")" ] || { [ -f "${1}" ] && ! [ -x "${1}" ]; }; then
  set -- node "$@"
fi
exec "$@"
