#!/bin/sh
# Renders deploy/kubernetes for one run, on stdout: kubectl kustomize's output with the
# tasksim/run label (the run's directory on the volume: a new one for every run) and the
# tasksim/start-at annotation (the instant every shard starts its load) set in both Jobs.
#   deploy/kubernetes/render.sh RUN START_AT | kubectl apply -f -
# e.g. deploy/kubernetes/render.sh fleet-1 "$(date -u -d '+3 min' +%Y-%m-%dT%H:%M:%SZ)".
# Needs kubectl (its built-in kustomize), grep -E and sed. Exit codes: 0 rendered, 2 usage, else
# kubectl's.
set -eu
usage() {
	echo "usage: $0 RUN START_AT, e.g. $0 fleet-1 2026-12-01T12:00:00Z" >&2
	exit 2
}
[ $# -eq 2 ] || usage
run=$1
start=$2
case $run in
[a-z0-9] | [a-z0-9]*[a-z0-9]) ;;
*)
	echo "$0: RUN \"$run\": want lower-case letters, digits, '-' and '.', starting and ending with a letter or digit (a label value and a directory name)" >&2
	exit 2
	;;
esac
case $run in
*[!a-z0-9.-]*)
	echo "$0: RUN \"$run\": want lower-case letters, digits, '-' and '.' only" >&2
	exit 2
	;;
esac
if [ ${#run} -gt 63 ]; then
	echo "$0: RUN \"$run\": at most 63 characters (a label value)" >&2
	exit 2
fi
# An RFC 3339 instant with its zone, as tasksim run --start-at takes it (a day past the
# month's end is left to run, which refuses it).
if ! printf '%s\n' "$start" | grep -Eq '^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\.[0-9]+)?(Z|[+-]([01][0-9]|2[0-3]):[0-5][0-9])$'; then
	echo "$0: START_AT \"$start\": want an RFC 3339 instant with its zone, e.g. 2026-12-01T12:00:00Z" >&2
	exit 2
fi
rendered=$(kubectl kustomize "$(dirname "$0")")
printf '%s\n' "$rendered" | sed \
	-e "s|^\( *tasksim/run:\) .*|\1 $run|" \
	-e "s|^\( *tasksim/start-at:\) .*|\1 \"$start\"|"
