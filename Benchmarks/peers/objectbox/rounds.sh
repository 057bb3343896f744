# What compare.sh and compare-vector.sh share, sourced by both (not run on its own):
#
#   peer=$(build_peer NAME [GCC_FLAGS…])   fetches ObjectBox's library (fetch.sh) and builds NAME.c
#                                          into the cache folder when its binary is missing or older
#                                          than the sources; prints the binary's path
#   out=$(output_folder PREFIX)            a new folder in the cache for the rounds' outputs
#   run_rounds ROUNDS                      calls the script's run_objectbox and run_cellar (each
#                                          given the round's number) ROUNDS times, alternating which
#                                          goes first
#   run_into FILE_PREFIX COMMAND…          runs COMMAND with stdout in FILE_PREFIX.tsv and stderr in
#                                          FILE_PREFIX.log; on failure shows the log's end, exit 1

peer_here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
peer_cache="$(mkdir -p "$peer_here/../../.build-objectbox" && cd "$peer_here/../../.build-objectbox" && pwd)"

build_peer() {
    local name=$1 library libdir binary
    shift
    library="$("$peer_here/fetch.sh" "$peer_cache")"
    libdir="$(dirname "$library")"
    binary="$peer_cache/$name"
    if [ ! -x "$binary" ] || [ "$peer_here/$name.c" -nt "$binary" ] || [ "$peer_here/objectbox-peer.h" -nt "$binary" ]; then
        echo "$(basename "$0"): building $name" >&2
        gcc -O2 -std=c11 -Wall -Werror -o "$binary" "$peer_here/$name.c" -L"$libdir" -lobjectbox -Wl,-rpath,"$libdir" "$@"
    fi
    echo "$binary"
}

output_folder() { mktemp -d "$peer_cache/$1.XXXXXX"; }

run_into() {
    local prefix=$1
    shift
    "$@" >"$prefix.tsv" 2>"$prefix.log" || { tail -n 20 "$prefix.log" >&2; exit 1; }
}

run_rounds() {
    local rounds=$1 round
    for ((round = 1; round <= rounds; round++)); do
        if ((round % 2 == 1)); then
            echo "round $round/$rounds: objectbox, then cellar" >&2
            run_objectbox "$round"; run_cellar "$round"
        else
            echo "round $round/$rounds: cellar, then objectbox" >&2
            run_cellar "$round"; run_objectbox "$round"
        fi
    done
}
