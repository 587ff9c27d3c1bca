#!/usr/bin/env bash
# testbed_mpirun.sh [--version | [--oversubscribe] -np N PROGRAM ARGS...]: an
# mpirun for run_mpi.sh that starts the job across the hosts of a testbed
# (`treduce testbed run`), so that the MPI tests run with their ranks
# spread over hosts.  testbed_matrix.sh sets TRD_TB_TOOL (treduce),
# TRD_TB_NAME (the testbed) and TRD_TB_MPIRUN (Open MPI's mpirun).
set -u
if [ "${1:-}" = --version ]; then
  echo "mpirun (Open MPI) across the hosts of treduce testbed ${TRD_TB_NAME:-?}"
  exit 0
fi
np=1
while [ $# -gt 0 ]; do
  case $1 in
    --oversubscribe) shift ;; # testbed run oversubscribes the hosts by itself
    -np) np=$2; shift 2 ;;
    *) break ;;
  esac
done
exec "$TRD_TB_TOOL" testbed run --name "$TRD_TB_NAME" --mpirun "$TRD_TB_MPIRUN" --np "$np" -- "$@"
