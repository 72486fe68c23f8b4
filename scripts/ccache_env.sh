# Sourced by the build scripts: ccache settings under which a fresh clone in another folder uses
# what an earlier clone's build left in the cache (paths under the clone are hashed relative to
# it, and the compile's own folder is not hashed). A cache of both trees (build/, build-fuzz/)
# needs more than ccache's default 5 GB.
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$PWD}"
export CCACHE_NOHASHDIR="${CCACHE_NOHASHDIR:-1}"
export CCACHE_MAXSIZE="${CCACHE_MAXSIZE:-20G}"
