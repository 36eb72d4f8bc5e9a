"""One adapter per scheduler (Slurm, PBS/Torque, LSF, Grid Engine): what each recognises in
a job's environment, what it asks, and which one `watch` may poll. No scheduler needed: the
commands are answered by a fake `run` seam, or by fake executables on PATH."""
import os

import pytest

from _load import load_gpualert
from wrapper_helpers import isolated_env, run_gpualert, write_executable

ga = load_gpualert()

PBS_USAGE = (2, "qstat: invalid option -- 'h'\nusage:\nqstat [-f [-F json|dsv]] [-p] [-J] "
                "[-t] [-x] [-E] [-G|-M] [-D] [job_identifier... | destination...]\n")
SGE_HELP = (0, "SGE 8.1.9\nusage: qstat [options]\n")


def fake_run(answers):
    """run= seam answering by command name; calls are recorded in .calls."""
    def run(argv, timeout, env=None):
        run.calls.append(list(argv))
        return answers.get(argv[0])
    run.calls = []
    return run


def which(*names):
    return lambda name: "/usr/bin/" + name if name in names else None


# ---- recognise: one adapter per scheduler, in detection order ----

def test_schedulers_in_detection_order_each_named_once():
    assert [s.kind for s in ga.SCHEDULERS] == ["slurm", "pbs", "lsf", "sge"]
    assert ga.scheduler_named("sge") is ga.SGE and ga.scheduler_named("slurm") is ga.SLURM
    assert ga.scheduler_named("") is ga.NO_SCHEDULER and ga.scheduler_named("htcondor") is ga.NO_SCHEDULER
    assert [s.kind for s in ga.SCHEDULERS if s.poll] == ["slurm", "sge"]  # what watch follows


@pytest.mark.parametrize("environ,fields", [
    ({"SLURM_JOB_ID": "42", "SLURM_ARRAY_JOB_ID": "40", "SLURM_ARRAY_TASK_ID": "2",
      "SLURM_JOB_END_TIME": "1700000000"},
     {"kind": "slurm", "job_id": "42", "array_job_id": "40", "array_task_id": "2",
      "end_time": 1700000000.0, "label": "40_2", "dir_tag": "slurm-40_2"}),
    ({"PBS_JOBID": "1234[7].server", "PBS_ARRAY_INDEX": "7", "PBS_QUEUE": "gpu"},
     {"kind": "pbs", "job_id": "1234[7].server", "array_job_id": "1234", "array_task_id": "7",
      "partition": "gpu", "label": "1234_7", "dir_tag": "pbs-1234_7"}),
    ({"LSB_JOBID": "28320", "LSB_JOBINDEX": "0", "LSB_HOSTS": "n1 n1 n2"},
     {"kind": "lsf", "job_id": "28320", "nodelist": "n1,n2", "label": "28320",
      "dir_tag": "lsf-28320"}),
    ({"JOB_ID": "17", "SGE_ROOT": "/opt/sge", "SGE_TASK_ID": "undefined", "QUEUE": "all.q"},
     {"kind": "sge", "job_id": "17", "partition": "all.q", "label": "17", "dir_tag": "sge-17"}),
    ({"JOB_ID": "17"}, {}),  # JOB_ID alone is any program's variable, not Grid Engine's
    ({"SLURM_JOB_ID": ""}, {}),
])
def test_each_adapter_recognises_its_own_environment(environ, fields):
    assert ga.detect_scheduler(environ) == fields


def test_the_first_adapter_in_order_names_the_job():
    both = {"SLURM_JOB_ID": "5", "PBS_JOBID": "6.server", "JOB_ID": "7", "SGE_ROOT": "/opt/sge"}
    assert ga.detect_scheduler(both)["kind"] == "slurm"
    assert [s.kind for s in ga.SCHEDULERS if s.recognise(both)] == ["slurm", "pbs", "sge"]


# ---- asked from inside a job ----

def test_kill_wait_per_adapter():
    assert ga.read_kill_wait({"kind": "slurm"}, run=fake_run({"scontrol": (0, "KillWait = 45 sec\n")})) == 45.0
    assert ga.read_kill_wait({"kind": "slurm"}, run=fake_run({})) == ga.KILL_WAIT_UNKNOWN_S
    notify = fake_run({"qconf": (0, "qname all.q\nnotify 00:00:20\n")})
    assert ga.read_kill_wait({"kind": "sge", "partition": "all.q"}, run=notify) == 20.0
    assert ga.read_kill_wait({"kind": "sge"}, run=notify) == 10.0 and not notify.calls[1:]
    assert ga.read_kill_wait({"kind": "pbs"}) == 10.0 and ga.read_kill_wait({}) == ga.KILL_WAIT_UNKNOWN_S


def test_only_grid_engine_sends_notices_with_a_reason_of_their_own():
    assert [s.kind for s in ga.SCHEDULERS if s.notices] == ["sge"]
    run = fake_run({"qstat": (0, "")})
    reason, evidence = ga.SGE.why_signalled({"kind": "sge", "job_id": "9"}, "SIGUSR1", 0.0, 100.0,
                                           time_limit={"source": "qstat -j", "sge_limits": {"s_rt": 100.0}},
                                           run=run)
    assert reason == "walltime" and "s_rt 00:01:40" in evidence
    assert ga.SGE.end_askers() == () and ga.query_end_reason({"kind": "sge", "job_id": "9"}, 0, 1,
                                                             run=run)[0] is None


def test_restarts_and_node_as_each_scheduler_names_them():
    assert ga.SLURM.restarts({"SLURM_RESTART_COUNT": "2"}) == "2" and ga.SLURM.restarts({}) == "0"
    assert ga.SGE.restarts({"RESTARTED": "1"}) == "1" and ga.SGE.restarts({"SLURM_RESTART_COUNT": "2"}) == "0"
    assert ga.SGE.node({"nodelist": "n7"}, {}) == "n7" and ga.SLURM.node({}, {"SLURMD_NODENAME": "g3"}) == "g3"
    assert ga.NO_SCHEDULER.node({}, {}) is None and ga.NO_SCHEDULER.plan_requeue({}, {}, True, "/") is None


# ---- watch: which scheduler it may poll (PBS's qstat is not Grid Engine's) ----

def test_grid_engine_is_told_from_pbs_by_its_own_words():
    assert ga.SGE.here(which("qstat"), fake_run({"qstat": SGE_HELP}), environ={})
    assert not ga.SGE.here(which("qstat"), fake_run({"qstat": PBS_USAGE}), environ={})
    assert not ga.SGE.here(which("qstat"), fake_run({}), environ={})  # hung: not known as SGE
    quiet = fake_run({})
    assert ga.SGE.here(which("qstat"), quiet, environ={"SGE_ROOT": "/opt/sge"}) and not quiet.calls
    assert not ga.SGE.here(which(), fake_run({"qstat": SGE_HELP}), environ={})


@pytest.mark.parametrize("tools,qstat,asked,kind", [
    (("scontrol", "qstat"), SGE_HELP, "auto", "auto"),
    (("scontrol", "qstat"), PBS_USAGE, "auto", "slurm"),  # PBS beside Slurm: Slurm alone
    (("qstat",), SGE_HELP, "auto", "auto"),
    (("qstat",), SGE_HELP, "sge", "sge"),
    (("scontrol", "qstat"), PBS_USAGE, "slurm", "slurm"),
    ((), None, "auto", "auto"),  # nothing here: the bounded give-up says so
    ((), None, "sge", "sge"),
])
def test_watch_kind(tools, qstat, asked, kind):
    assert ga.watch_kind(asked, which(*tools), fake_run({"qstat": qstat}), environ={}) == kind


@pytest.mark.parametrize("asked", ["auto", "sge"])
def test_watching_pbs_jobs_is_said_to_be_unsupported(asked):
    with pytest.raises(ga.UsageError) as err:
        ga.watch_kind(asked, which("qstat"), fake_run({"qstat": PBS_USAGE}), environ={})
    assert str(err.value) == ("watch: the qstat here is PBS's, not Grid Engine's: watching PBS "
                              "jobs is not supported")
    with pytest.raises(ga.UsageError, match="watching LSF jobs is not supported"):
        ga.watch_kind("auto", which("bjobs"), fake_run({}), environ={})


def test_watch_with_pbs_qstat_is_a_one_line_usage_error(tmp_path):
    # A PBS-like qstat first on PATH, no Slurm: watch stops before polling anything.
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    log = tmp_path / "qstat-calls"
    qstat = bin_dir / "qstat"
    write_executable(qstat, "#!/bin/sh\necho \"$@\" >> %s\necho \"qstat: invalid option -- 'h'\" >&2\n"
                     "echo 'usage: qstat [-f] [-x] [job_identifier...]' >&2\nexit 2\n" % log)
    env = isolated_env(tmp_path, PATH=str(bin_dir))  # /bin may be /usr/bin, with scontrol
    env.pop("SGE_ROOT", None)
    for args in (["watch", "4242"], ["watch", "--scheduler", "sge", "4242"]):
        proc = run_gpualert(tmp_path, args, env=env)
        err = proc.stderr.decode().strip()
        assert proc.returncode == 2, err
        assert "watching PBS jobs is not supported" in err and len(err.splitlines()) == 1, err
    assert log.read_text().split() == ["-help", "-help", "-help", "-help"]  # never `qstat -j`
    assert not os.path.exists(tmp_path / "logs")


def test_poll_job_goes_through_the_adapter_that_knows_the_job():
    memory = {}
    run = fake_run({"qstat": (0, "job_number:                 31\njob_name:                   x\n")})
    (info,) = ga.poll_job("31", run=run, scheduler="sge", memory=memory)
    assert info["kind"] == "sge" and not info["done"] and memory["sge_record"]["job_name"] == "x"
    run = fake_run({"scontrol": None, "squeue": None, "sacct": None, "qstat": SGE_HELP})
    notes = []
    assert ga.poll_job("31", run=run, notes=notes) is None  # auto, with a seam: Slurm's alone
    assert {c[0] for c in run.calls} == {"scontrol", "squeue", "sacct"} and len(notes) == 3


def test_watched_result_words_come_from_the_adapter(tmp_path):
    sge = {"job_id": "17", "label": "17", "kind": "sge", "state": "finished", "name": "j",
           "facts": {"exit_code": 0, "scheduler_evidence": "qacct: failed 0"}, "end_time": 1e9}
    result = ga.watched_result(sge, None, str(tmp_path))
    assert result.argv == ["qsub job 17"] and result.notes[:2] == [
        "SGE job finished (seen by gpualert watch on %s)" % result.host, "qacct: failed 0"]
    slurm = dict(sge, kind=None, state="COMPLETED")
    result = ga.watched_result(slurm, None, str(tmp_path))
    assert result.argv == ["sbatch job 17"] and result.notes == [
        "Slurm state COMPLETED (seen by gpualert watch on %s)" % result.host]
