#!/usr/bin/env bash
# make test-slurm: the README's Slurm recipe for `mixfx batch` on a real single-node Slurm.
# Starts a private Slurm (scripts/slurm/start.sh, stopped on exit by its recorded pids), takes
# the sbatch script from the README's batch section (only /shared/ pointed at a scratch folder,
# checked by undoing that and comparing with the README's text) and submits it:
#   a) the 16-task array over 32 short jobs: every task exits 0, every output exists once with
#      its input's frame count, each task's summary names its own shard's jobs as done
#   b) the same array again: every job skipped, the outputs' bytes and times unchanged
#   c) a task cancelled before it ran, then resubmitted alone (--array=5): its shard's outputs
#      appear, nothing else is rendered again
#   d) a stepped array (--array=0-6:2): exactly the shards 0, 2, 4 and 6 render
#   e) --shard auto without a count: the task fails with exit 2 and one clear line, writes
#      nothing; with MIXFX_SHARD_COUNT=16 in its environment the same script renders its shard
# Ends with `N passed, N failed` on a line of its own; exit 1 when anything failed.
#
#   scripts/test-slurm.sh [MIXFX]      MIXFX: the binary to test (default .build/release/mixfx)
#
# Needs root (the daemons), the packages of `scripts/install-deps.sh slurm`, python3 (reads the
# summaries). MIXFX_SLURM_KEEP=1 keeps the scratch folder and the daemons' logs.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
binary=${1:-.build/release/mixfx}
[ "$(id -u)" -eq 0 ] || { echo "test-slurm: run as root (sudo make test-slurm): slurmd starts the tasks as their users" >&2; exit 2; }
[ -x "$binary" ] || { echo "test-slurm: no mixfx binary at '$binary' (swift build -c release --product mixfx)" >&2; exit 2; }
for c in sox soxi python3 sbatch; do
  command -v "$c" >/dev/null || { echo "test-slurm: '$c' is missing: scripts/install-deps.sh slurm installs it" >&2; exit 2; }
done
# the shard comes from Slurm alone: nothing from the caller's environment
unset MIXFX_SHARD_COUNT MIXFX_SHARD_INDEX JOB_COMPLETION_INDEX SLURM_ARRAY_TASK_ID

work=$(mktemp -d /tmp/mixfx-test-slurm.XXXXXX)
slurm=$(mktemp -d /tmp/mixfx-slurm.XXXXXX)   # apart from $work: munge must reach its files
cleanup() {
  scripts/slurm/stop.sh "$slurm"
  if [ "${MIXFX_SLURM_KEEP:-0}" = 1 ]; then echo "test-slurm: scratch kept in $work" >&2; else rm -rf "$work"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

passed=0 failed=0
pass() { passed=$((passed + 1)); echo "ok    $*"; }
fail() { failed=$((failed + 1)); echo "FAIL  $*"; }
# check DESCRIPTION EXPECTED ACTUAL
section() { echo "-- $* ($((SECONDS - t0)) s)"; }
check() { if [ "$2" = "$3" ]; then pass "$1"; else fail "$1: expected '$2', got '$3'"; fi; }
finish() { echo "$passed passed, $failed failed"; [ "$failed" -eq 0 ]; exit $?; }

# --- the recipe: the README's sbatch script, exactly ----------------------------------------
t0=$SECONDS
readme_script=$work/readme.sbatch
awk '/^## Batches/ { inside = 1; next }
     inside && /^## / { exit }
     inside && /^A Slurm array job/ { want = 1; next }
     want && /^```sh$/ { copy = 1; next }
     copy && /^```$/ { exit }
     copy { print }' README.md > "$readme_script"
if grep -q '^#SBATCH --array=0-15$' "$readme_script" && grep -q -- '--shard auto/16' "$readme_script" \
   && grep -q '/shared/jobs.jsonl' "$readme_script"; then
  pass "the README's batch section has the sbatch script ($(wc -l < "$readme_script") lines: --array=0-15, --shard auto/16, /shared/jobs.jsonl)"
else
  fail "the README's sbatch script (after 'A Slurm array job' in '## Batches') is missing or no longer has --array=0-15, --shard auto/16 and /shared/jobs.jsonl:"
  cat "$readme_script"
  finish
fi

# recipe DIR [EDIT UNDO]: the README's script with /shared/ replaced by DIR/ (and the sed
# expression EDIT applied), after checking that undoing both (UNDO) gives the README's text back
recipe() {
  local dir=$1 edit=${2:-} undo=${3:-} out=$1/render.sbatch
  sed "s#/shared/#$dir/#g${edit:+; $edit}" "$readme_script" > "$out"
  if ! sed "s#$dir/#/shared/#g${undo:+; $undo}" "$out" | cmp -s - "$readme_script"; then
    echo "test-slurm: the script in $dir is not the README's" >&2; return 1
  fi
  echo "$out"
}

# --- a private Slurm ---------------------------------------------------------------------------
# a node of 32 CPUs (declared: more than this host has), so the 16 tasks of 2 CPUs run at once
# as on a cluster, all writing into one folder; on a node of the host's 2 CPUs they would run one
# at a time, about a second each (Slurm starts the next task about a second after one ends)
if ! line=$(MIXFX_SLURM_CPUS=32 scripts/slurm/start.sh "$slurm" | tail -1) || [ "${line#export SLURM_CONF=}" = "$line" ]; then
  fail "the private Slurm started (scripts/slurm/start.sh)"
  MIXFX_SLURM_KEEP=1; finish
fi
export SLURM_CONF=${line#export SLURM_CONF=}

# mixfx on the PATH, as the README says to install it (the tasks inherit sbatch's environment)
install -d "$work/bin" && install -m 755 "$binary" "$work/bin/mixfx"
export PATH=$work/bin:$PATH

# --- the jobs: 32 short mono WAVs, each its own length; 16 shards of 2 ---------------------------
jobs=32 shards=16
frames_of() { echo $((4800 + 480 * $1)); }       # job i's input (and output) length in frames
# ids_of_shard S: --shard S/N takes the jobs whose position (from 0) is S modulo N
ids_of_shard() { local s=$1 i out=(); for ((i = s; i < jobs; i += shards)); do out+=("job-$i"); done; echo "${out[*]}"; }
mkdir -p "$work/stems"
for ((i = 0; i < jobs; i++)); do
  sox -n -r 48000 -c 1 -b 16 "$work/stems/in-$i.wav" synth "$(frames_of "$i")s" sine $((200 + 20 * i)) vol 0.3
done
# setup DIR: a folder as the recipe's /shared/: the manifest (inputs in ../stems), an empty out/
setup() {
  local dir=$1 i
  mkdir -p "$dir/out" "$dir/logs"
  for ((i = 0; i < jobs; i++)); do
    if ((i % 2)); then args='["--pitch", "100"]'; else args='["--bass", "3"]'; fi
    printf '{"tracks": ["../stems/in-%d.wav"], "output": "out/job-%d.wav", "args": %s, "id": "job-%d"}\n' "$i" "$i" "$args" "$i"
  done > "$dir/jobs.jsonl"
}

# submit DIR SCRIPT [SBATCH OPTIONS...]: prints the job id
submit() {
  local dir=$1 script=$2; shift 2
  sbatch --parsable --chdir="$dir" --output="$dir/logs/task-%a.log" "$@" "$script" | cut -d';' -f1
}
# tasks JOBID: waits, prints `TASK STATE EXITCODE` lines
tasks() { scripts/slurm/wait-job.sh "$1" 120; }
# outputs DIR: the renders in DIR/out, sorted
outputs() { (cd "$1/out" && ls -1 -- *.wav 2>/dev/null | sort -V | tr '\n' ' ' | sed 's/ $//'); }
# snapshot DIR: every file of DIR/out with its size, modification time (ns) and checksum
snapshot() { (cd "$1/out" && find . -type f -printf '%p %s %T@ ' -exec md5sum {} \; | sort); }
# summaries DIR "TASK..." KEY...: for each task, a line `TASK VALUE...` from DIR/summary-TASK.json
# (shard as I/N, done-ids: the jobs it rendered), or `TASK missing` (one python3 for them all)
summaries() {
  python3 - "$@" <<'PY'
import json, sys
folder, tasks, keys = sys.argv[1], sys.argv[2].split(), sys.argv[3:]
for t in tasks:
    try:
        s = json.load(open("%s/summary-%s.json" % (folder, t)))
    except (OSError, ValueError):
        print(t, "missing"); continue
    out = [t]
    for key in keys:
        if key == "done-ids":
            out.append(",".join(j["id"] for j in s["jobs"] if j["status"] == "done"))
        elif key == "shard":
            out.append("%d/%d" % (s["shard"]["index"], s["shard"]["count"]))
        else:
            out.append(str(s[key]))
    print(" ".join(out))
PY
}
# expect_summaries "TASK..." LINE: the lines summaries() should print: LINE for each task, with
# T the task, N the shard count and IDS the task's job ids (comma-separated)
expect_summaries() {
  local t; for t in $1; do sed "s/\bT\b/$t/g; s/\bN\b/$shards/g; s/\bIDS\b/$(ids_of_shard "$t" | tr ' ' ,)/" <<<"$2"; done
}
# expected_outputs SHARD...: the outputs of those shards, sorted as outputs() sorts them
expected_outputs() {
  local s id list=()
  for s in "$@"; do for id in $(ids_of_shard "$s"); do list+=("$id.wav"); done; done
  printf '%s\n' "${list[@]}" | sort -V | tr '\n' ' ' | sed 's/ $//'
}
all_tasks_ok() {  # N: "0 COMPLETED 0" ... "N-1 COMPLETED 0"
  local i; for ((i = 0; i < $1; i++)); do echo "$i COMPLETED 0"; done
}
# frames_ok DIR: each output's frame count (soxi -s) against its input's
frames_ok() {
  local dir=$1 f i bad=0 n=0
  for f in "$dir"/out/job-*.wav; do
    i=${f##*/job-}; i=${i%.wav}; n=$((n + 1))
    [ "$(soxi -s "$f")" = "$(frames_of "$i")" ] || { bad=$((bad + 1)); echo "  $f: $(soxi -s "$f") frames, its input $(frames_of "$i")" >&2; }
  done
  echo "$n outputs, $bad with another length"
}

# --- a) the whole array ----------------------------------------------------------------------
section "a) the 16-task array"
A=$work/a; setup "$A"
script=$(recipe "$A") || { fail "a) the recipe for $A"; finish; }
job=$(submit "$A" "$script")
check "a) 16 tasks, each exit 0" "$(all_tasks_ok 16)" "$(tasks "$job")"
check "a) out/ holds the 32 outputs and their sidecars, nothing else" \
  "$(expected_outputs $(seq 0 15)) / $jobs sidecars" "$(outputs "$A") / $(find "$A/out" -name '*.wav.mixfx-batch.json' | wc -l) sidecars"
check "a) out/ holds 64 files: no temporary left behind" $((2 * jobs)) "$(ls -A "$A/out" | wc -l)"
check "a) every output has its input's length (soxi -s)" "$jobs outputs, 0 with another length" "$(frames_ok "$A")"
all16=$(seq 0 15 | tr '\n' ' ')
check "a) each task's summary: its shard, 32 in all, done 2 (its own two jobs), skipped 0, failed 0" \
  "$(expect_summaries "$all16" "T T/N $jobs 2 0 0 IDS")" "$(summaries "$A" "$all16" shard total "done" skipped failed done-ids)"
done_all=$(summaries "$A" "$all16" done-ids | cut -d' ' -f2 | tr , '\n')
check "a) the summaries' done jobs: 32, each once" "$jobs $jobs" "$(wc -l <<<"$done_all") $(sort -u <<<"$done_all" | wc -l)"
check "a) the tasks' logs are empty (--quiet, no warnings)" "" "$(cat "$A"/logs/*.log)"
before=$(snapshot "$A")

# --- b) the same array again: everything skipped -------------------------------------------
section "b) the same array again"
rm -f "$A"/logs/*.log
job=$(submit "$A" "$script")
check "b) rerun: 16 tasks, each exit 0" "$(all_tasks_ok 16)" "$(tasks "$job")"
check "b) rerun: each summary says done 0, skipped 2, failed 0" \
  "$(expect_summaries "$all16" "T T/N 0 2 0")" "$(summaries "$A" "$all16" shard "done" skipped failed)"
check "b) rerun: the outputs and sidecars are unchanged (size, time, checksum)" "$before" "$(snapshot "$A")"

# --- c) a task cancelled before it ran, resubmitted alone ---------------------------------------
section "c) a task cancelled, resubmitted alone"
C=$work/c; setup "$C"; k=5
script=$(recipe "$C") || { fail "c) the recipe for $C"; finish; }
job=$(submit "$C" "$script" --hold)
# a held array is one record; an update splits task k off so its cancellation is kept
scontrol update JobId="${job}_$k" Nice=1 && scancel "${job}_$k"
scontrol release "$job" 2>/dev/null   # reports task k as finished; the others are released
expected=$(all_tasks_ok 16 | sed "s/^$k COMPLETED 0$/$k CANCELLED 0/")
check "c) task $k cancelled, the other 15 exit 0" "$expected" "$(tasks "$job")"
mapfile -t other_shards < <(seq 0 15 | grep -vx "$k")
others=$(expected_outputs "${other_shards[@]}")
check "c) the outputs of the other 15 shards, none of shard $k's" "$others" "$(outputs "$C")"
check "c) no summary from task $k" "$k missing" "$(summaries "$C" "$k" "done")"
before=$(snapshot "$C")
job=$(submit "$C" "$script" --array=$k)
check "c) task $k resubmitted alone (--array=$k) exits 0" "$k COMPLETED 0" "$(tasks "$job")"
check "c) its summary: shard $k/16, done 2 (its own jobs), skipped 0" \
  "$(expect_summaries "$k" "T T/N 2 0 IDS")" "$(summaries "$C" "$k" shard "done" skipped done-ids)"
check "c) now all 32 outputs" "$(expected_outputs $(seq 0 15))" "$(outputs "$C")"
not_k=(); for id in $(ids_of_shard "$k"); do not_k+=(-e "^\./$id\.wav"); done
after_others=$(snapshot "$C" | grep -v "${not_k[@]}")
check "c) nothing else rendered again (the other 30 outputs' size, time, checksum)" "$before" "$after_others"
check "c) shard $k's outputs have their inputs' lengths" "$jobs outputs, 0 with another length" "$(frames_ok "$C")"

# --- d) a stepped array ---------------------------------------------------------------------------
section "d) a stepped array"
D=$work/d; setup "$D"
script=$(recipe "$D") || { fail "d) the recipe for $D"; finish; }
job=$(submit "$D" "$script" --array=0-6:2)
check "d) --array=0-6:2: tasks 0, 2, 4, 6 exit 0" "$(printf '%s COMPLETED 0\n' 0 2 4 6)" "$(tasks "$job")"
check "d) exactly the outputs of shards 0, 2, 4, 6" "$(expected_outputs 0 2 4 6)" "$(outputs "$D")"
check "d) the four summaries: shard s/16, done 2, its own jobs" \
  "$(expect_summaries "0 2 4 6" "T T/N 2 IDS")" "$(summaries "$D" "0 2 4 6" shard "done" done-ids)"
check "d) the summaries of those four tasks only" "summary-0.json summary-2.json summary-4.json summary-6.json" \
  "$(cd "$D" && ls summary-*.json | sort -V | tr '\n' ' ' | sed 's/ $//')"

# --- e) --shard auto with no count: refused -------------------------------------------------------
section "e) --shard auto without a count"
E=$work/e; setup "$E"
script=$(recipe "$E" 's#--shard auto/16 #--shard auto #' 's#--shard auto #--shard auto/16 #') || { fail "e) the recipe for $E"; finish; }
grep -q -- '--shard auto --jobs' "$script" && pass "e) the script says --shard auto (no count)" || fail "e) the script still has a count: $(grep -- --shard "$script")"
job=$(submit "$E" "$script" --array=3)
check "e) --shard auto without MIXFX_SHARD_COUNT: task 3 fails with exit 2" "3 FAILED 2" "$(tasks "$job")"
log=$(cat "$E/logs/task-3.log" 2>/dev/null)
check "e) its log is one line" 1 "$(printf '%s\n' "$log" | grep -c .)"
case $log in
  "mixfx: error: --shard auto: SLURM_ARRAY_TASK_ID is 3 but the number of shards is not known"*MIXFX_SHARD_COUNT*)
    pass "e) the line names SLURM_ARRAY_TASK_ID=3, the unknown count and MIXFX_SHARD_COUNT" ;;
  *) fail "e) the error line: '$log'" ;;
esac
check "e) nothing written (no output, no summary)" "|3 missing" "$(outputs "$E")|$(summaries "$E" 3 "done")"
job=$(submit "$E" "$script" --array=3 --export=ALL,MIXFX_SHARD_COUNT=16)
check "e) the same script with MIXFX_SHARD_COUNT=16: task 3 exits 0" "3 COMPLETED 0" "$(tasks "$job")"
check "e) ... and renders shard 3/16 exactly" "$(expect_summaries 3 "T T/N 2 IDS") | $(expected_outputs 3)" \
  "$(summaries "$E" 3 shard "done" done-ids) | $(outputs "$E")"

echo "test-slurm: $((SECONDS - t0)) s (Slurm, inputs and the five cases)"
finish
