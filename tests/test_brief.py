"""One brief: the first screen of a run (what, where, line, progress, checkpoint, time, next)
is one value, and the e-mail's text part, its HTML part and a json:// post all render it, so
e-mail and chat cannot disagree (issue 19, item 5)."""
import html
import json

import pytest

from messages import N, T0, _metrics, _result, array_summary, failure_with_ranks
from messages import success_with_metrics, timeout_after_warning

JSON_URL = "json://127.0.0.1:9/hook"


def nan_with_checkpoint():
    log = "".join("step %d loss %s\n" % (s, "%.3f" % (2.0 / (1 + s / 100.0)) if s < 600 else "nan")
                  for s in range(0, 800, 50))
    ckpt = {"path": "/home/ana/run/ckpt/step_500.pt", "size": 10 << 20, "mtime": T0 + 3000,
            "later_nonfinite": 2}
    return _result(classification=N.Classification("nan_loss", "nan_loss", None, 20, "step 600 loss nan",
                                                   "Lower the learning rate."),
                   metrics=_metrics(log, checkpoint=ckpt), tail=["step 750 loss nan"])


RANK_LINES = ["step 10 loss 2.1", "Traceback (most recent call last):",
              '  File "/home/ana/proj/train.py", line 61, in main', "    batch = data['input_ids']",
              "KeyError: 'input_ids'"]


def rank_prefixed(prefix="[3]:"):
    """The issue's reproducer as a value: the classifier's verdict on a rank-prefixed log."""
    tail = [prefix + line for line in RANK_LINES]
    return _result(classification=N.classify_text("\n".join(tail) + "\n", {"exit_code": 1}), tail=tail)


RESULTS = {"failure with rank": failure_with_ranks, "rank-prefixed reproducer": rank_prefixed,
           "success": success_with_metrics, "time limit": timeout_after_warning,
           "NaN with checkpoint": nan_with_checkpoint, "array summary": array_summary}


def json_post(result):
    channel = N.parse_channel(JSON_URL)
    request = N.build_channel_request(channel, N.brief_for(result), N.result_record(result))
    return json.loads(request.body.decode("utf-8"))


# ---- the brief as a value ----

def test_the_brief_of_a_failure_on_a_rank():
    brief = N.brief_for(failure_with_ranks())
    rows = dict(brief.fields)
    assert (brief.status, brief.cls, brief.severity) == ("FAILED", "cuda_oom", "failure")
    assert brief.title == "[gpualert] FAILED job 4242 train.py: cuda_oom on gpu041 (exit 1, 2h13m)"
    assert [label for label, _ in brief.fields][:5] == ["What", "Where", "Line", "Progress", "Checkpoint"]
    assert rows["What"] == "FAILED: cuda_oom on rank 3 (tried to allocate 2.00 GiB)"
    assert rows["Where"] == "/home/ana/resnet/train.py:160 in train_step"
    assert rows["Line"] == "output.log:18234: " + brief.evidence
    # progress from the parsed metrics (the e-mail's source), not the tail's raw rank-0 line
    assert rows["Progress"] == "step 9000, epoch 18; loss 0.5633"
    assert rows["Next"].startswith("Reduce the batch size")
    assert brief.text.splitlines() == ["%s: %s" % row for row in brief.fields]


@pytest.mark.parametrize("prefix", ["[3]:", "[RANK3]:", "[1,3]<stderr>:", " 3: "])
def test_a_rank_prefix_names_the_rank_and_the_users_frame(prefix):
    rows = N.brief_for(rank_prefixed(prefix)).fields
    assert rows[0][0] == "What" and "on rank 3" in rows[0][1] and "KeyError" in rows[0][1]
    assert rows[1] == ("Where", "/home/ana/proj/train.py:61 in main")


def test_a_success_says_how_long_and_what_it_reached():
    brief = N.brief_for(success_with_metrics())
    rows = dict(brief.fields)
    assert brief.severity == "ok" and brief.evidence == "" and "Where" not in rows and "Next" not in rows
    assert rows["What"].startswith("SUCCESS after ") and "Result" in rows


def test_a_time_limit_says_how_much_time_and_how_to_resubmit():
    rows = dict(N.brief_for(timeout_after_warning()).fields)
    assert rows["What"].startswith("TIMEOUT: walltime") and "allowed" in rows["Time"]
    assert rows["Resubmit"].startswith("sbatch --time=")


def test_nan_names_the_checkpoint_to_resume_from():
    rows = dict(N.brief_for(nan_with_checkpoint()).fields)
    assert rows["Checkpoint"].startswith("/home/ana/run/ckpt/step_500.pt (10.0 MiB)")
    assert "the 2 written after the first non-finite loss (step 600) are not offered" in rows["Checkpoint"]


def test_an_array_brief_counts_the_tasks():
    brief = N.brief_for(array_summary())
    assert brief.fields[0] == ("What", "FAILED: " + N.array_subject(array_summary().array))
    assert dict(brief.fields)["Tasks"] == "12 of 13 tasks reported; the others are listed with Slurm's state"
    assert brief.evidence == ""


def test_without_parsed_metrics_the_last_progress_line_is_the_progress():
    result = _result(tail=["epoch 3 step 450/5000 loss 1.25", "Traceback ..."])
    assert dict(N.brief_for(result).fields)["Progress"] == "epoch 3 step 450/5000 loss 1.25"


# ---- every renderer shows the same brief ----

@pytest.mark.parametrize("name", sorted(RESULTS))
def test_email_text_html_and_the_json_post_show_every_row_of_the_brief(name):
    result = RESULTS[name]()
    brief = N.brief_for(result)
    text, page, post = N.render_text(result, []), N.render_html(result, []), json_post(result)
    assert text.startswith(brief.title[len("[gpualert] "):] + "\n\nWhat you need:\n")
    assert brief.title in post["title"] and post["severity"] == brief.severity
    for label, value in brief.fields:
        assert "  %-11s %s\n" % (label + ":", value) in text, (label, value)
        assert ">%s</th>" % html.escape(label) in page and html.escape(value) in page, (label, value)
        assert "%s: %s" % (label, value) in post["text"], (label, value)


def test_the_reproducer_names_rank_3_and_train_py_61_in_the_first_rows_and_the_post():
    result = rank_prefixed("[3]:")
    first = N.render_text(result, []).split("\n\n")[1]  # the "What you need" block
    assert "on rank 3" in first and "train.py:61" in first
    post = json_post(result)["text"]
    assert "on rank 3" in post and "Where: /home/ana/proj/train.py:61 in main" in post


def _real_output(name):
    """The command's own lines of a real run's durable log (between gpualert's header and footer)."""
    import os
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "real", name)
    with open(path, encoding="utf-8") as handle:
        text = handle.read()
    return text.split("gpualert: 0.1.0\n", 1)[1].split("=== gpualert command ended ===")[0]


def test_a_real_torchrun_failure_names_the_failing_ranks_own_frame():
    """Real torchrun (torch 2.13, gloo, 2 ranks): rank 1's KeyError at train_ddp.py:15, then
    rank 0's allreduce error at line 18, then torchrun's own traceback (bin/torchrun:8) last.
    Where was the launcher's console script; it is rank 1's innermost frame of its own code."""
    output = _real_output("torchrun_ddp_keyerror.log")
    tail = output.splitlines()
    result = _result(classification=N.classify_text(output, {"exit_code": 1}), tail=tail)
    rows = dict(N.brief_for(result).fields)
    assert "on rank 1" in rows["What"] and "KeyError" in rows["What"]
    assert rows["Where"] == "/tmp/h10-ddp/train_ddp.py:15 in <listcomp>"


@pytest.mark.parametrize("launcher", [
    '  File "/opt/venv/bin/accelerate", line 8, in <module>',
    '  File "/opt/venv/bin/deepspeed", line 6, in <module>'])
def test_a_launchers_frame_is_never_where(launcher):
    tail = ["Traceback (most recent call last):", '  File "/home/ana/proj/train.py", line 61, in main',
            "    batch = data['input_ids']", "KeyError: 'input_ids'",
            "Traceback (most recent call last):", launcher, "    sys.exit(main())",
            "subprocess.CalledProcessError: Command '['python', 'train.py']' returned non-zero exit status 1."]
    result = _result(classification=N.classify_text("\n".join(tail) + "\n", {"exit_code": 1}), tail=tail)
    assert dict(N.brief_for(result).fields)["Where"] == "/home/ana/proj/train.py:61 in main"
