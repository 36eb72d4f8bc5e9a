"""Grid Engine's records, read by the pure core: no SGE needed. The qacct/qstat texts in
tests/fixtures/sge/ were captured from the real SGE 8.1.9 that .ci/sge-setup.sh sets up
(the jobs of tests/test_sge.py: s_rt, -notify at h_rt, qdel of a -notify job, an array)."""
import os
import pathlib

from _load import load_gpualert

ga = load_gpualert()
SGE = pathlib.Path(__file__).resolve().parent / "fixtures" / "sge"


def read(name):
    return (SGE / name).read_text()


def test_durations_and_limits():
    assert ga.parse_sge_duration("30") == 30.0
    assert ga.parse_sge_duration("0:1:30") == 90.0
    assert ga.parse_sge_duration("1:00:00:00") == 86400.0
    assert ga.parse_sge_duration("INFINITY") is None
    assert ga.parse_sge_duration("") is None
    assert ga.format_hms(8) == "00:00:08" and ga.format_hms(90061) == "25:01:01"
    assert ga.sge_limits("h_rt=30,s_rt=20") == {"h_rt": 30.0, "s_rt": 20.0}
    assert ga.sge_limits("-l h_rt=0:1:0,s_rt=8 -notify") == {"h_rt": 60.0, "s_rt": 8.0}
    assert ga.sge_limits("NONE") == {}


def test_the_environment_of_an_array_task():
    env = {"JOB_ID": "17", "SGE_ROOT": "/var/lib/gridengine", "SGE_TASK_ID": "2",
           "SGE_TASK_FIRST": "1", "SGE_TASK_LAST": "5", "SGE_TASK_STEPSIZE": "2",
           "JOB_NAME": "arr", "QUEUE": "all.q"}
    sched = ga.detect_scheduler(env)
    assert (sched["label"], sched["dir_tag"], sched["array_task_count"]) == ("17.2", "sge-17.2", 3)
    assert ga.array_task_count(env) == 3
    plain = dict(env, SGE_TASK_ID="undefined", SGE_TASK_FIRST="undefined",
                 SGE_TASK_LAST="undefined", SGE_TASK_STEPSIZE="undefined")
    sched = ga.detect_scheduler(plain)
    assert sched["label"] == "17" and "array_job_id" not in sched
    assert ga.array_task_count(plain) is None


def test_signal_reasons():
    limits = {"s_rt": 8.0, "h_rt": 60.0}
    assert ga.sge_signal_reason("SIGUSR1", 8.6, limits) == (
        "walltime", "s_rt 00:00:08 reached (SIGUSR1 after 8s)")
    reason, evidence = ga.sge_signal_reason("SIGUSR1", 2.0, limits)
    assert reason is None and "suspension" in evidence  # -notify's warning before a suspend
    assert ga.sge_signal_reason("SIGUSR1", 5.0, None)[0] == "walltime"  # limits unreadable
    reason, evidence = ga.sge_signal_reason("SIGUSR1", 5.0, {"h_rt": 60.0})  # no s_rt at all
    assert reason is None and "no s_rt" in evidence
    assert ga.sge_signal_reason("SIGUSR2", 60.2, limits, "r")[0] == "walltime"
    reason, evidence = ga.sge_signal_reason("SIGUSR2", 12.0, limits, "dr")
    assert reason == "cancelled" and "qdel" in evidence and "dr" in evidence
    assert ga.sge_signal_reason("SIGUSR2", 12.0, limits, "r")[0] == "cancelled"  # before h_rt
    assert ga.sge_signal_reason("SIGUSR2", 12.0, {}, "r")[0] is None  # nothing to tell by


def test_stop_signals_depend_on_the_scheduler():
    assert "SIGUSR2" in ga.stop_signal_names({"kind": "sge"})
    assert "SIGUSR2" not in ga.stop_signal_names({"kind": "slurm"})
    assert "SIGUSR1" not in ga.stop_signal_names({"kind": "sge"})


def test_qacct_records_become_facts():
    (hrt,) = ga.parse_qacct(read("qacct-hrt-notify.txt"))
    facts = ga.sge_facts(hrt)
    assert facts["scheduler_reason"] == "walltime" and facts["exit_code"] == -12
    assert facts["scheduler_evidence"].startswith("h_rt 00:00:10 reached; qacct: failed 37 : qmaster enforced")
    verdict = ga.classify_text("", facts)
    assert ga.status_for(facts["exit_code"], verdict.cls) == "TIMEOUT"
    (srt,) = ga.parse_qacct(read("qacct-srt.txt"))
    facts = ga.sge_facts(srt)
    assert facts["scheduler_reason"] == "walltime" and "s_rt 00:00:08 reached" in facts["scheduler_evidence"]
    (qdel,) = ga.parse_qacct(read("qacct-qdel-notify.txt"))
    facts = ga.sge_facts(qdel)  # SIGKILL after the job: qacct cannot tell qdel from the OOM killer
    assert "scheduler_reason" not in facts and facts["exit_code"] == -9
    assert "failed 100 : assumedly after job" in facts["scheduler_evidence"]
    tasks = ga.parse_qacct(read("qacct-array.txt"))
    assert [t["taskid"] for t in tasks] == ["1", "2", "3"]
    assert [ga.sge_facts(t)["exit_code"] for t in tasks] == [0, 4, 0]
    info = ga.job_info_from_qacct(tasks[1], {})
    assert (info["label"], info["done"], info["exit_code"], info["kind"]) == ("17.2", True, 4, "sge")
    assert info["end_time"] is not None and "output files are unknown" in info["note"]


def test_submission_record_gives_the_output_files(tmp_path):
    rec = ga.parse_sge_job(read("qstat-j-array.txt"))
    assert rec["job_number"] == "20" and rec["hard resource_list"] == "h_rt=30,s_rt=20"
    assert rec["usage 2"].startswith("cpu=")
    rec = dict(rec, stdout_path_list="NONE:NONE:%s" % tmp_path, cwd=str(tmp_path))
    assert ga.sge_output_path(rec["stdout_path_list"], rec, "2", "o") == str(tmp_path / "look.o20.2")
    assert ga.sge_output_path(rec["stderr_path_list"], rec, "2", "e") == "/tmp/sgetry/err.txt"
    assert ga.sge_output_path(None, rec, None, "o") == str(tmp_path / "look.o20")
    assert ga.sge_output_path("NONE:NONE:out-$JOB_ID.$TASK_ID", rec, "3", "o") == \
        os.path.join(str(tmp_path), "out-20.3")
    assert ga.sge_output_path("/dev/null", rec, None, "e") is None
    assert ga.parse_sge_job("") == {}


def test_the_job_listing_gives_state_and_start():
    text = read("qstat-listing.txt")
    state, start = ga.parse_sge_listing(text, "20", "2")
    assert state == "dr" and start is not None
    assert ga.parse_sge_listing(text, "21")[0] == "dr"
    assert ga.parse_sge_listing(text, "99") == (None, None)


def test_poll_follows_a_job_from_the_queue_to_qacct(tmp_path):
    record = read("qstat-j-array.txt").replace("/tmp/sgetry", str(tmp_path))
    answers = {"qstat": (0, record), "qacct": (1, "error: job id 20 not found\n")}
    now = [1000.0]

    def run(argv, timeout):
        return answers[argv[0]]
    memory = {}
    (info,) = ga.SGE.poll("20", run, memory, clock=lambda: now[0])
    assert not info["done"] and info["name"] == "look"
    answers["qstat"] = (1, "Following jobs do not exist: \n20\n")
    (info,) = ga.SGE.poll("20", run, memory, clock=lambda: now[0])
    assert not info["done"]  # left the queue, accounting not flushed yet
    now[0] += ga.SGE_ACCOUNTING_WAIT_S + 1
    (info,) = ga.SGE.poll("20", run, memory, clock=lambda: now[0])
    assert info["done"] and "qacct has no record" in info["facts"]["scheduler_evidence"]
    assert info["stderr"] == str(tmp_path / "err.txt")
    answers["qacct"] = (0, read("qacct-array.txt").replace("jobnumber    17", "jobnumber    20"))
    infos = ga.SGE.poll("20", run, memory, clock=lambda: now[0])
    assert [i["label"] for i in infos] == ["20.1", "20.2", "20.3"]
    assert infos[0]["stdout"] == str(tmp_path / "look.o20.1")  # -o named a directory
    assert ga.SGE.poll("7", lambda argv, t: (1, ""), {}) == []
    assert ga.SGE.poll("7", lambda argv, t: None, {}) is None


def test_qacct_keeps_the_submission_watch_saw():
    """Job ids wrap and a reinstalled cell counts from 1 again: qacct -j 17 lists both."""
    old = read("qacct-srt.txt").replace("jobnumber    13", "jobnumber    17")
    new = read("qacct-hrt-notify.txt").replace("jobnumber    14", "jobnumber    17")
    both = ga.parse_qacct(old + new)
    assert len(both) == 2
    (rec,) = ga.same_submission(both, both[0]["qsub_time"])
    assert rec["jobname"] == "srt"
    latest = ga.same_submission(both)  # never seen queued: the latest submission
    assert [r["jobname"] for r in latest] == [max(both, key=lambda r: ga._sge_time(r["qsub_time"]))["jobname"]]
    assert [r["jobname"] for r in ga.same_submission(both, "Mon Jan  1 00:00:00 2001")] == \
        [r["jobname"] for r in latest]  # an unreadable stamp never hides the job
