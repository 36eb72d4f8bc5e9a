#!/usr/bin/env python3
"""gpualert: run a GPU training command unchanged and tell its owner how it ended, and why.

Synopsis
    python3 gpualert.py [OPTIONS] -- CMD [ARGS...]   run CMD, notify when it ends
    python3 gpualert.py classify [--exit-code N] [--json] LOG...
    python3 gpualert.py watch [OPTIONS] JOBID...     follow Slurm or SGE jobs, notify when each ends
    python3 gpualert.py resend                       retry every message in the outbox
    python3 gpualert.py runs [--since DUR] [--failed] [--node NODE] [--job ID] [--json]
                                                     every run's end, newest first
    python3 gpualert.py digest [--since DUR] [--always]   one message about those runs (cron)
    python3 gpualert.py prune [--older-than DUR] [--dry-run]  remove run directories (30d old)
    python3 gpualert.py test-email                   send a test message through the configured transport
    python3 gpualert.py test-notify [URL...]         post a test to every chat/push channel (or the given ones)
    python3 gpualert.py config                       print the effective configuration and its sources
    python3 gpualert.py help | --version | --help

What a run does
    Before CMD starts, a run directory and a log with a header (command, host, cwd, start
    time, scheduler ids) exist on disk, flushed and fsync'd, and a stand-in message (status
    SILENT: no end was reported) waits in the outbox, renewed while gpualert lives: if it or
    its node dies, a later `resend` sends that. CMD's stdout and stderr stream
    live to the terminal and, as raw bytes in arrival order, into the log. When CMD ends,
    however it ends, the log gets a footer, the run is classified (cause, evidence line,
    remediation), run.json is written beside the log, and one message goes out: by SMTP or
    by the node's sendmail. It is spooled to the outbox first and leaves it only once a
    transport accepted it; `resend` (on a login node, or the next run) delivers what is left
    later, each message claimed first so it goes out once (a claim is a lease its owner
    renews, taken over only once seen unrenewed for 15 minutes, never by wall-clock age).
    No message is ever lost; one refused for good (or a recipient refused for good) goes
    to outbox/dead/ with the reason. By default a message carries the
    log only (--artifacts GLOB|auto for more); secret-looking arguments show as *** and the
    job never sees GPUALERT_SMTP_PASSWORD.

Exit status (the wrapper is transparent)
    N        CMD exited with N
    128+N    CMD died of signal N (SIGKILL -> 137, SIGSEGV -> 139)
    2        usage error (nothing was run)
    125      gpualert itself failed before CMD could run
    126      CMD was found but could not be executed
    127      CMD was not found
    Notification trouble never changes the exit status.

Configuration, in rising precedence: the INI file ([gpualert] section of --config,
$GPUALERT_CONFIG or ~/.config/gpualert/config.ini), GPUALERT_* environment variables, flags.
Every option --some-option has the config key some_option and the variable
GPUALERT_SOME_OPTION. The SMTP password comes only from GPUALERT_SMTP_PASSWORD or the
config key smtp_password, never from the command line. A file another user owns, or that
group or others may write to, is refused (chmod go-w it).

Chat and push channels: --notify-url URL (repeatable; notify_url, comma-separated;
GPUALERT_NOTIFY_URL) posts a short message beside the e-mail, within the same deadline:
Slack, Discord, Teams (Workflows), Google Chat, Mattermost and Rocket.Chat webhook URLs,
https://ntfy.sh/TOPIC, ntfy(s)://, gotify(s)://, pover://, tgram://, matrix(s)://,
json(s)://, and any other scheme through the `apprise` command when it is installed.
?gpualert_when=always|failure|never in a URL overrides --notify for it. Tokens are shown
as *** everywhere; failed posts wait in the outbox for `resend`.

Every run at a glance
    `runs` lists the run.json of every run under --log-dir, whichever host of a shared home
    wrote it, newest first (filters: --since 24h, --failed, --node, --job; --json: one object
    a line); a corrupt record is skipped with one warning. `digest` sends one message about
    the runs of --since (24h): counts by status and class, time lost and GPU-hours, nodes
    with failures (suspect: two or more that point at the node), messages still in the
    outbox, requeues made (--requeue); none when there were no runs, unless --always.
    `prune` (--older-than 30d unless given) removes run directories whose run ended before then, never the
    outbox, a run still going, or one a waiting message names (--dry-run lists them). Cron, on a login node:
        0 7 * * *  gpualert.py resend; gpualert.py digest; gpualert.py prune --older-than 30d

Requeue by cause: --requeue preempted,walltime,hardware|all (requeue, GPUALERT_REQUEUE)
requeues a Slurm batch job whose cause a rerun can fix (scontrol requeue; for a GPU fault
its batch script again with sbatch --exclude=NODE; SGE: qmod -rj, after qalter -l
hostname=!NODE for a GPU fault), never one whose code, data or memory would fail it
again; --max-requeues N (3) bounds walltime and hardware, preemptions have a cap of
their own (20). The command sees GPUALERT_ATTEMPT (1, 2, ...) and GPUALERT_RESUME (the
newest checkpoint of the earlier attempts while it is yours and unchanged, or empty).

Examples
    python3 gpualert.py --to me@uni.edu -- python train.py --lr 3e-4
    python3 gpualert.py --smtp smtp.uni.edu:587 --smtp-user me --timeout 12h -- torchrun train.py

Requires Python 3.6 or newer and nothing outside the standard library.
"""

__version__ = "0.1.0"

import collections
import errno
import io
import os
import re
import signal
import stat
import sys
import threading
import time
import types

# Python 2.7 and 3.0-3.5 parse the whole file before running any of it, so no version check
# can run there: they stop at the first line they cannot parse and print it. This f-string
# (new in 3.6) is that line, so what they print says what is wrong.
NEEDS_PYTHON = f"gpualert needs Python 3.6 or newer, not {sys.version.split()[0]}"


# ==== Constants ====

EXIT_USAGE = 2
EXIT_INTERNAL = 125
EXIT_NOT_EXECUTABLE = 126
EXIT_NOT_FOUND = 127

GRACE_S = 15.0  # after SIGTERM, before SIGKILL; at most half the scheduler's kill wait
KILL_MARGIN_S = 2.0  # the message is delivered or in the outbox this long before SIGKILL
READ_CHUNK_BYTES = 1 << 20  # the pipe buffer is raised to this, so a fast writer costs few reads
# Output kept in memory for the classifier and the message. Nothing else is looked at
# while streaming: any per-byte scan would cost more than tee and could throttle the child.
TAIL_BYTES = 1024 * 1024
TAIL_LINES = 60
TAIL_MAX_PIECES = 256  # reads kept for the tail before they are joined into one
TAIL_CLIPPED_MARK = b"[...] "  # before the end of a line that started before the tail
DRAIN_S = 10.0  # after the child exits, output of processes that still hold its pipes is logged this long
SECONDS_SHOWN_BELOW_S = 600  # durations shorter than this are shown to the second
HANG_MIN_READS = 3  # outputs before a silence can be compared with the gaps between them
FILE_CLOCK_TICK_S = 0.02  # how far a file's mtime (the kernel's coarse clock) may lag time.time()
TERMINAL_GRACE_S = 2.0  # after the child exits, a terminal that takes no output is given up after this
READER_STALL_S = 1.0  # once the grace is spent, a reader that takes nothing this long has stopped
TERMINAL_WRITE_BYTES = 64 << 10  # the most one write to an output takes: a pipe's default buffer
TERMINAL_BACKLOG_BYTES = 4 << 20  # unread terminal output held; beyond it the child's pipe is not read
#: Lines that could decide a run's cause anywhere in the log: exception and error lines,
#: fatal markers, launchers' root-cause blocks, scheduler lines (one case-sensitive grep -E
#: alternation: each extra alternative costs grep time over a GiB, so they are few and
#: general). Not TRIGGER_WORDS: those include words on every line of ordinary output ("inf"
#: in INFO, "nccl", "gpu"), which would fill the bounded list before a decisive line far down.
#: For the same reason a name used as a key (`train/MeanSquaredError=0.3`, `'Error': 2`) is no
#: evidence: a log's metric lines would use up the list before its one exception line.
# A scheduler's verdict may stand at the top of the file (LSF's job report before the output,
# TERM_RUNLIMIT), so its words are markers too: it beats the silence of a log that just stops.
SCHEDULER_MARKERS = ("CANCELLED", "TERM_[A-Z]+:", "PBS: job killed", "wallclock")
EVIDENCE_MARKERS = ("Error([^='\"]|$)", "Exception", "Traceback", "Killed", "Segmentation fault", "Root Cause",
                    "FATAL", "out of memory") + SCHEDULER_MARKERS
EVIDENCE_MAX_LINES = 1000  # the first ones: a root cause comes before its consequences
EVIDENCE_READ_BYTES = 4 << 20
EVIDENCE_SCAN_S = 2.0
EVIDENCE_LINE_BYTES = 1 << 20  # grep is given a line's first MiB at most (it holds a whole line)
FOLLOW_POLL_S = 0.2  # how often the evidence grep looks whether the log grew while the job runs
FOLLOW_CHUNK_BYTES = 8 << 20  # at most this much of the log handed to that grep per call
FOLLOW_NICE = 10  # how much nicer than us: it takes idle CPU, not the job's or the pump's
EVIDENCE_SPLIT_BYTES = 64 << 20  # a rest this long at the end is shared by two greps
#: Fed to the first of those greps after its half (with a random token, so no line of a log
#: can be taken for it); it matches the pattern, so its grep -n line number counts that
#: half's lines. It is never written to the log.
EVIDENCE_SPLIT_LINE = "gpualert: end of the first half %s (an Error line made to match)"
SETTLE_S = 0.5  # at most this long reading the child's last output before the message is made
SAME_KILL_S = 0.5  # a job-wide kill reaches us this long after the child at most, on a busy node
TREE_SAMPLE_S = 1.0  # the process tree's memory and CPU, when the job has no cgroup of its own
TREE_FIRST_SAMPLE_S = 0.1  # the first sample of the tree, after the child's start
WARM_DELAY_S = 0.05  # warm_up() starts once the child has run this long (not for `true`)
#: Launchers whose work runs elsewhere (under slurmstepd): their rusage is their own, not the job's.
REMOTE_LAUNCHERS = ("srun",)
POLL_S = 0.1
WORKER_POLL_S = 0.01  # how often the main thread looks whether the post-exit work is done
END_REASON_WAIT_S = 3.5  # for the scheduler's answer about a SIGTERM (asked when it came): one
#                          query's timeout (CMD_TIMEOUT_S) and a little, within the deadline
FORWARDED_SIGNALS = ("SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT", "SIGUSR1", "SIGUSR2")
STOP_SIGNALS = ("SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT")  # USR1/USR2 are warnings, not an end
WARNING_SIGNALS = ("SIGUSR1", "SIGUSR2")  # passed on only to processes that catch them
#: The one signal table: Linux numbers (exit codes and logs come from Linux nodes).
SIGNAL_NAMES = {1: "SIGHUP", 2: "SIGINT", 3: "SIGQUIT", 4: "SIGILL", 5: "SIGTRAP", 6: "SIGABRT",
                7: "SIGBUS", 8: "SIGFPE", 9: "SIGKILL", 10: "SIGUSR1", 11: "SIGSEGV",
                12: "SIGUSR2", 13: "SIGPIPE", 14: "SIGALRM", 15: "SIGTERM", 16: "SIGSTKFLT",
                17: "SIGCHLD", 18: "SIGCONT", 19: "SIGSTOP", 20: "SIGTSTP", 21: "SIGTTIN",
                22: "SIGTTOU", 23: "SIGURG", 24: "SIGXCPU", 25: "SIGXFSZ", 26: "SIGVTALRM",
                27: "SIGPROF", 28: "SIGWINCH", 29: "SIGIO", 30: "SIGPWR", 31: "SIGSYS"}
SCHEDULER_DAEMONS = ("slurmstepd", "pbs_mom", "sge_shepherd", "res", "sbatchd")
SI_KERNEL = 0x80  # si_code of a signal the kernel (e.g. the terminal's Ctrl-C) generated
ENV_PREFIX = "GPUALERT_"
HEADER_MARK = "=== gpualert"

#: --requeue CAUSES: each cause a rerun can fix, and the verdict classes it covers.
REQUEUE_CAUSES = collections.OrderedDict((("preempted", ("preempted",)),
                                          ("walltime", ("walltime",)),
                                          ("hardware", ("gpu_hardware",))))
MAX_REQUEUES_DEFAULT = 3  # requeues for walltime and hardware (--max-requeues)
REQUEUE_TELL_S = 5.0  # a refused requeue's follow-up message: delivered or spooled by then
#: Preemptions are the site's doing, not the job's: they never spend --max-requeues, only this
#: cap, which stops a job that is preempted over and over from looping for ever.
PREEMPT_REQUEUES_MAX = 20
#: Classes never requeued, whatever --requeue asks: why a rerun would not help.
NEVER_REQUEUED = dict(
    [(cls, "a rerun would fail the same way") for cls in (
        "traceback", "assertion", "runtime_error", "file_not_found", "missing_module",
        "permission", "device_mismatch", "div_zero", "exec_failure")]
    + [("nan_loss", "a rerun would diverge the same way"),
       ("cuda_oom", "a rerun needs the same memory"), ("ram_oom", "a rerun needs the same memory"),
       ("oom_killer", "a rerun needs the same memory"),
       ("interrupted", "it was stopped on purpose")])
#: The child's environment on every attempt of a requeued job (README "Requeue by cause").
ATTEMPT_ENV, RESUME_ENV = "GPUALERT_ATTEMPT", "GPUALERT_RESUME"
#: Exported to a resubmitted job: the earlier jobs of its chain (their run records, thread),
#: joined by ":" (sbatch --export splits its list at commas, so "4242,4250" arrived as 4242).
REQUEUED_FROM_ENV = "GPUALERT_REQUEUED_FROM"

# (flag, config key, kind, metavar, help). Kinds (convert_option reads them): str, path (~ and
# $VARS expanded), list (comma-separated, repeatable), urls (comma- or space-separated,
# repeatable), flag, flag:a|b (a flag that may name a value), size, duration, seconds, int,
# count (an int >= 0), causes (--requeue's names), choice:a|b, optpath (flag with an optional
# value). The table drives the parser, the environment variables, the config file keys and
# `config`.
RUN_OPTIONS = (
    ("--to", "to", "list", "ADDR", "recipient, repeatable (default: the local user)"),
    ("--from", "from_addr", "str", "ADDR", "sender address (default: gpualert <USER@HOST>)"),
    ("--name", "name", "str", "NAME", "job name in the subject (default: the script)"),
    ("--notify", "notify", "choice:always|failure|never", "WHEN", "always (default), failure or never"),
    ("--notify-url", "notify_url", "urls", "URL", "chat/push channel, repeatable (Slack, Discord, "
     "Teams, ntfy, matrix://, tgram://...)"),
    ("--log-dir", "log_dir", "path", "DIR", "where run directories go"),
    ("--artifacts", "artifacts", "list", "GLOB", "files to attach, repeatable; auto: new result-like files (default: the log only)"),
    ("--metric", "metric", "list", "NAME", "metric to report and plot, repeatable (default: loss/accuracy-like)"),
    ("--no-plots", "no_plots", "flag", "", "no picture of the run in the message"),
    ("--budget", "budget", "size", "SIZE", "largest message, e.g. 5M (default)"),
    ("--timeout", "timeout", "duration", "DURATION", "stop CMD after e.g. 90s, 12h"),
    ("--grace", "grace", "duration", "DURATION", "SIGTERM to SIGKILL delay (15s)"),
    ("--drain", "drain", "duration", "DURATION", "log output of CMD's leftover processes this long (10s)"),
    ("--smtp", "smtp", "str", "HOST[:PORT]", "SMTP relay"),
    ("--smtp-user", "smtp_user", "str", "USER", "SMTP login (password: env/config)"),
    ("--smtp-tls", "smtp_tls", "choice:starttls|ssl|none", "MODE", "starttls, ssl or none (default: STARTTLS if offered)"),
    ("--smtp-timeout", "smtp_timeout", "seconds", "SECONDS", "bound on delivery (30)"),
    ("--sendmail", "sendmail", "optpath", "[PATH]", "deliver with sendmail -t -oi (none: never)"),
    ("--outbox", "outbox", "path", "DIR", "where undelivered messages wait"),
    ("--stall", "stall", "duration", "DURATION", "notify once if CMD is silent this long"),
    ("--gpu-interval", "gpu_interval", "seconds", "SECONDS", "nvidia-smi sampling (60, 0=off)"),
    ("--all-ranks", "all_ranks", "flag", "", "notify from every rank, not only rank 0"),
    ("--array-summary", "array_summary", "flag:each", "[=each]", "one message per job array (=each: and one per task)"),
    ("--max-per-hour", "max_per_hour", "count", "N", "cap on messages an hour (30; 0=none)"),
    ("--requeue", "requeue", "causes", "CAUSES", "requeue the job for preempted, walltime, hardware "
     "or all, comma-separated (default: never)"),
    ("--max-requeues", "max_requeues", "count", "N", "requeues for walltime and hardware (3; "
     "preemptions have their own cap of %d)" % PREEMPT_REQUEUES_MAX),
    ("--dry-run", "dry_run", "flag", "", "build the message, save it, send nothing"),
    ("--quiet", "quiet", "flag", "", "print nothing of gpualert's own"),
    ("--config", "config", "path", "FILE", "INI file"),
    ("--no-env-tweaks", "no_env_tweaks", "flag", "", "no PYTHONUNBUFFERED/FAULTHANDLER"),
    ("--no-redact", "no_redact", "flag", "", "show secret-looking arguments of CMD as given"),
)


SECRET_KEYS = ("smtp_password",)
#: Names whose values are secrets: options of the command (--hf-token), NAME=VALUE
#: arguments (WANDB_API_KEY=...), GPUALERT_* variables kept from the child.
SECRET_NAME = re.compile(r"token|passw(?:or)?d|secret|api[-_]?key|auth|credential", re.I)
#: ... and the options (and NAME=VALUE names) that have one of these as a word of their name
#: (--pass, --passphrase, --wandb-key, --key=, --private-key, --github-pat, --bearer), and -p.
SECRET_WORDS = frozenset(("pass", "passphrase", "pw", "pwd", "key", "pat", "bearer", "sig",
                          "signature"))
SECRET_SHORT = frozenset(("-p",))
#: ... but not right after these commands, where -p is something else (mkdir -p out, ssh -p 22)
NOT_SECRET_AFTER = frozenset(("mkdir", "cp", "ssh", "scp", "psql", "install", "nc", "rsync"))
#: Options whose value is USER:PASSWORD (curl -u, wget/curl --user): the part after ':' is hidden.
USER_OPTIONS = frozenset(("-u", "--user", "--proxy-user"))
#: URL query parameters whose values are secrets (?access_token=X&sig=Y), also in channel URLs.
SECRET_PARAM = r"token|key|sig|secret|pass|auth|code"


#: Bound on the whole delivery (DNS, connect, TLS, AUTH, DATA, the 552 retry), seconds.
MAIL_TIMEOUT_S = 30.0
#: Default size bound of one serialized message (CRLF line ends, base64 included), bytes.
MAIL_BUDGET_BYTES = 5 * 1000 * 1000  # Postfix refuses more than 10,240,000 by default
#: Default artifact discovery: result-like names under cwd, new or changed since the start.
ARTIFACT_PATTERNS = ("*.json", "*.jsonl", "*.csv", "*.tsv", "*.yaml", "*.yml", "*.txt",
                     "*.md", "*.log", "*.png", "*.jpg", "*.jpeg", "*.svg", "*.pdf", "*.html")


ARTIFACT_SKIP_DIRS = frozenset((".git", ".hg", ".svn", "__pycache__", ".venv", "venv", "env",
                                "node_modules", ".cache", "wandb", ".ipynb_checkpoints",
                                "site-packages", ".tox", ".mypy_cache", ".pytest_cache"))


#: Never attached by --artifacts auto: keys, certificates, env files, tokens, credentials,
#: Jupyter kernel connection files (their HMAC key runs code in the kernel).
ARTIFACT_SECRET_PATTERNS = ("*.key", "*.pem", "*.crt", "*.cer", "*.p12", "*.pfx", "*.jks",
                            "*.keystore", "id_rsa*", "id_ed25519*", "id_ecdsa*", "*.env",
                            ".env*", "*token*", "*credential*", "*secret*", "*password*",
                            "*passwd*", "kernel-*.json", "jpserver-*.json", "*.netrc",
                            "*.pgpass", "*apikey*", "*api_key*", "*api-key*")
ARTIFACT_MAX_DEPTH = 5        # cwd is depth 0; reaches Hydra's outputs/DATE/TIME/.hydra/
ARTIFACT_MAX_SCAN = 5000      # directory entries examined, at most
ARTIFACT_MAX_FILES = 200      # candidates returned, at most
ARTIFACT_MTIME_SLACK_S = 2.0  # coarse file-system timestamps (FAT, some NFS) round down
ATTACH_MAX_FILES = 20         # individual attachments; more go into one zip
ATTACH_FILE_MAX_BYTES = 25 * 1024 * 1024  # never read a bigger file whole, whatever the budget
ZIP_MAX_MEMBERS = 200
ZIP_MEMBER_MAX_BYTES = 64 * 1024 * 1024   # never read a bigger file into the zip
GZIP_MAX_INPUT_BYTES = 512 * 1024 * 1024  # never gzip a bigger log (time bound)
GZIP_MAX_RATIO = 40           # a log this much bigger than the room left will not fit gzipped
LOG_EXCERPT_HEAD_BYTES = 64 * 1024
PART_OVERHEAD_BYTES = 400     # MIME headers + boundary of one attachment part
BODY_SAFETY_BYTES = 4096      # slack for header folding and manifest estimate errors
HTML_ROOM_BYTES = 64 * 1024  # below this much room for files, the HTML part gives way to them
SUBJECT_MAX_CHARS = 200
TAIL_LINE_MAX_CHARS = 500
RESEND_MAX_S = 300.0          # bound on one `resend` run
DIGEST_SINCE_S = 86400.0      # `digest` covers this long by default
RESEND_MAX_ITEMS = 1000       # messages one `resend` tries, at most
RUN_FLUSH_MAX_S = 2.0         # a run's flush of earlier messages never delays its end more
RUN_FLUSH_MAX_ITEMS = 20      # ... nor tries more messages than this
CLAIM_LEASE_S = 900.0         # a claim nobody renewed for this long, as one reader saw it on
                              # its own clock since boot, may be taken over (_unrenewed)
LEASE_RENEW_S = 60.0          # how often a live owner renews its claim (the run's stand-in,
                              # a message being sent)
DEAD_NOTE_MAX = 20            # dead letters named in one message, at most ...
DEAD_NOTE_CHARS = 1000        # ... and no more than fit this: a field of every chat service
                              # shows it whole (Teams' and Mattermost's 1,000); the next
                              # message names the rest
DEAD_REASON_CHARS = 150       # one refusal's reason in the note
DEAD_PATH_CHARS = 160         # its dead/ folder, clipped in the middle
TOLD_MAX_BYTES = 4 << 20       # dead/.told: 100,000 names; what is past it is named again
DEAD_NOTE_HEAD = "earlier message(s) were refused for good"  # the note's words; chat shows it
RUN_JSON_MAX_BYTES = 16 << 20  # a bigger run.json is not one gpualert wrote
RECORD_MAX_BYTES = RUN_JSON_MAX_BYTES + (1 << 20)  # a spooled chat post (json:// holds a run's)
SENDMAIL_CANDIDATES = ("/usr/sbin/sendmail", "/usr/lib/sendmail")
# sysexits.h codes a sendmail gives when retrying cannot help: EX_DATAERR, EX_NOUSER,
# EX_NOHOST (75, EX_TEMPFAIL, is the usual "try later", and Postfix's "too big").
SENDMAIL_PERMANENT_EXITS = (65, 67, 68)

# Cluster integration is best effort: the public functions here never raise; each problem
# becomes a note string. Every external command goes through `run_command` (tests pass
# `run=` with real-format output) with a short timeout, in its own session, so a hung
# command and its children can be killed without touching the training job.

# Scheduler defaults when they cannot be asked: Slurm KillWait, PBS kill_delay, LSF
# JOB_TERMINATE_INTERVAL, SGE's notify time.
KILL_WAIT_UNKNOWN_S = 10.0  # not learned in time: sites often lower the defaults, so assume less
CMD_TIMEOUT_S = 3.0         # one scheduler query; the SIGTERM path asks at most a few
LIMIT_READ_PAUSES_S = (2.0, 5.0, 10.0)  # the time limit asked again after these, unanswered
END_REASON_BUDGET_S = 8.0   # all queries after SIGTERM together (Slurm's KillWait is often 30 s)
WALLTIME_MARGIN_S = 180.0   # "near the limit": --signal and limit checks are ~60 s coarse
END_TIME_MARGIN_S = 60.0    # the least of it (and all of it with only an end time known)
GPU_TIMEOUT_S = 5.0
GPU_GIVE_UP_FAILURES = 2    # consecutive nvidia-smi timeouts before the sampler stops asking
IDLE_MIN_S = 600.0          # a run shorter than this is never called "idle"
WATCH_INTERVAL_S = 60.0
WATCH_MAX_INTERVAL_S = 600.0
WATCH_UNKNOWN_RETRIES = 3   # polls a job may be unknown to squeue/scontrol/sacct alike
WATCH_GIVE_UP_S = 600.0     # `watch` stops after this long of polls that all failed (--give-up)
SGE_ACCOUNTING_WAIT_S = 60.0  # watch: a job left SGE's queue; wait this long for qacct's record
LOCK_WAIT_S = 3.0          # longest wait for the array-summary or rate-limit lock
SLURM_NO_VAL = "4294967294"  # what %a becomes for a job that is not an array task

GPU_FIELDS = ("index", "name", "memory.used", "memory.total", "utilization.gpu",
              "temperature.gpu", "power.draw", "ecc.errors.uncorrected.volatile.total")


GPU_KEYS = ("index", "name", "mem_used_mib", "mem_total_mib", "util_pct", "temp_c",
            "power_w", "ecc_uncorrected")

# Slurm job states: which are final, and what each means to the classifier.
SLURM_FINAL_STATES = ("COMPLETED", "FAILED", "TIMEOUT", "CANCELLED", "OUT_OF_MEMORY",
                      "NODE_FAIL", "PREEMPTED", "BOOT_FAIL", "DEADLINE", "REVOKED",
                      "SPECIAL_EXIT")


SLURM_STATE_REASONS = {"TIMEOUT": "walltime", "DEADLINE": "walltime",
                       "PREEMPTED": "preempted", "NODE_FAIL": "preempted", "CANCELLED": "cancelled"}


def _state_dir():
    """gpualert's own state: the runs, the outbox, array records, the hourly cap."""
    home = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state")
    return os.path.join(home, "gpualert")


def default_config():
    """The embedded defaults: with none of them changed, a run works on a fresh machine."""
    state = _state_dir()
    return {
        "to": [], "from_addr": None, "name": None, "notify": "always", "notify_url": [],
        "log_dir": os.path.join(state, "runs"), "artifacts": [], "metric": [], "no_plots": False,
        "budget": MAIL_BUDGET_BYTES, "timeout": None, "grace": GRACE_S, "drain": DRAIN_S,
        "smtp": None, "smtp_user": None, "smtp_password": None, "smtp_tls": None,
        "smtp_timeout": MAIL_TIMEOUT_S, "sendmail": None,
        "outbox": os.path.join(state, "outbox"), "stall": None, "gpu_interval": 60.0,
        "all_ranks": False, "array_summary": False, "max_per_hour": 30,
        "requeue": [], "max_requeues": MAX_REQUEUES_DEFAULT, "dry_run": False, "quiet": False, "config": None,
        "no_env_tweaks": False, "no_redact": False,
    }


#: Names a checkpoint has in PyTorch, Lightning, HF, Keras, JAX/orbax and DeepSpeed runs.
CHECKPOINT_PATTERNS = ("*.pt", "*.pth", "*.ckpt", "*.safetensors", "*.h5", "*.keras",
                       "*.msgpack", "*.distcp", "checkpoint*", "ckpt*", "*checkpoint*.bin",
                       "pytorch_model*.bin", "global_step*")
CHECKPOINT_MAX_SCAN = 3000
MASK = "***"  # what a secret is shown as, wherever it leaves the machine
CHECKPOINT_FUTURE_S = 5.0  # a checkpoint dated further ahead (clock skew, a planted date) is not offered


# ==== Records and errors ====

# rank: the rank whose line the verdict rests on (or that a launcher named), None when the
# log shows none; every renderer reads it from here.
Classification = collections.namedtuple(
    "Classification", "cls rule detail line evidence remediation rank")
Classification.__new__.__defaults__ = (None,)


RunResult = collections.namedtuple(
    "RunResult", "status name argv host cwd start end exit_code exit_status signal_name "
    "classification log_path run_dir tail rusage scheduler notes gpu metrics array digest requeue")
# metrics: from the log after exit (metrics_from_chunks); array: an array summary (summarize_array);
# digest: the runs of a period (make_digest), for `gpualert digest`;
# requeue: what --requeue decided and did, a JSON-ready dict (requeue_record), or None
RunResult.__new__.__defaults__ = (None, None, None, None)

# What a transport (SMTP, sendmail, a chat service, apprise) says of one attempt; detail:
# one line. size_rejected: too big as it is (the slim retry may pass); transport_down: no
# use trying the next message now; permanent: refused for good (5xx, 4xx of a webhook), not
# worth a retry; refused: {address: (code, text)} of the recipients the relay refused at
# RCPT while it accepted the message for the others.
SendResult = collections.namedtuple(
    "SendResult", "ok detail size_rejected transport_down permanent refused")
SendResult.__new__.__defaults__ = (False, False, False, None)


# What --requeue decides for one ended attempt (decide_requeue). action: "requeue" (the same
# job again), "resubmit" (a new job without the node) or None; cause: the --requeue cause of
# the verdict, or None; reason: why nothing is done (None when an action is); budget:
# (requeues spent with this one, cap) or None.
RequeueDecision = collections.namedtuple("RequeueDecision", "action cause reason budget")


# signals: (name, epoch, sender) in arrival order; sender "kernel" (a terminal's Ctrl-C) or
# the sending process's name.
ChildExit = collections.namedtuple(
    "ChildExit", "exit_code rusage exec_error timed_out signals stall_s hang warnings")
# hang: ChildPump.hang; warnings: SignalRelay.warnings
ChildExit.__new__.__defaults__ = (None, None)


# Everything a run knows once its child has exited, gathered once (Run.gather); the pure
# core derives the facts, the verdict and the RunResult from it. tail: the output's last
# bytes; end_reason: the scheduler's (reason, evidence) or None; metrics: what the log's
# lines say about training (extract_log_metrics); notes: a tuple of lines; evidence: the
# (line number, line) pairs of the whole log that could be decisive (find_evidence).
Outcome = collections.namedtuple(
    "Outcome", "argv name host cwd scheduler rank log_path run_dir start end child tail "
    "total_lines mem_before mem_after gpu end_reason metrics notes evidence")
Outcome.__new__.__defaults__ = ((),)


# The dead letters a message names (dead_letter_note): letters [(path, reason)], the note
# (None: no note) and entries [(name, the note through that name and the ":" or "," after
# it)]: a post shows a name whole only if it shows the note that far.
DeadNote = collections.namedtuple("DeadNote", "letters text entries")
NO_DEAD_NOTE = DeadNote([], None, [])


def _with_note(result, note):
    """The result with one more note (none if note is None or already there)."""
    if note is None or note in result.notes:
        return result
    return result._replace(notes=list(result.notes) + [note])


def make_verdict(cls, detail=None):
    """A Classification that no rule made: a class and what it is about, nothing more."""
    return Classification(cls, None, detail, None, None, None)


class GpuAlertError(Exception):
    """Base of gpualert's own errors; only main() turns them into messages."""


class UsageError(GpuAlertError):
    """Bad command line: exit 2 before anything runs."""


class ConfigError(GpuAlertError):
    """A configuration value or file that cannot be used."""


class _ArtifactList(list):
    """A list of paths that remembers whether discovery stopped at a bound, and the folders
    it could not read ("path: why")."""
    truncated = False
    unreadable = ()


# ==== Runtime helpers ====

#: Our own outputs (fd -> TerminalCopy) while a run copies to them; _warn writes through them.
TERMINAL_COPIES = {}


def _warn(message):
    """One line on stderr; through the run's terminal copy when there is one, so a reader
    that stopped reading never blocks us."""
    copy = TERMINAL_COPIES.get(2)
    if copy is not None:
        copy.put(("gpualert: %s\n" % message).encode("utf-8", "replace"), TERMINAL_BACKLOG_BYTES)
        return
    try:
        sys.stderr.write("gpualert: %s\n" % message)
        sys.stderr.flush()
    except (OSError, ValueError):
        pass  # stderr is closed: there is nowhere left to say it


def _safely(fn, default, report=False):
    """Call fn(); on any exception return `default`: side work never breaks the run. The one
    exception-swallowing wrapper. report: True warns that the exit status is unaffected; a
    function is called with the exception instead (the caller's own note or warning)."""
    try:
        return fn()
    except Exception as exc:  # noqa: BLE001 - isolation is the point
        if callable(report):
            report(exc)
        elif report:
            _warn("internal error after the run (%s: %s); the exit status is unaffected"
                  % (type(exc).__name__, exc))
        return default


class Background(object):
    """fn() in a daemon thread; result(timeout) -> its value, or None if late or failed."""

    def __init__(self, fn, report=False):
        import threading
        self._value = None
        self._thread = threading.Thread(target=self._run, args=(fn, report), daemon=True)
        self._thread.start()

    def _run(self, fn, report):
        self._value = _safely(fn, None, report=report)

    def running(self):
        return self._thread.is_alive()

    def result(self, timeout):
        self._thread.join(timeout)
        return None if self.running() else self._value


def _set_pipe_size(fd, size):
    import fcntl
    fcntl.fcntl(fd, getattr(fcntl, "F_SETPIPE_SZ", 1031), size)


def _hostname(short=False):
    """This machine's name, without DNS (gethostname(2) is uname's nodename). short: gpu041 of
    gpu041.cluster.uni.edu, as subjects and run directories show it; else the whole name
    cut to [A-Za-z0-9.-] (localhost if nothing is left), as Message-IDs and EHLO need."""
    name = os.uname()[1]
    if short:
        return name.split(".")[0]
    return re.sub(r"[^A-Za-z0-9.-]", "", name) or "localhost"


#: Helper commands still running: a query the wrapper no longer waits for is ended at exit.
LIVE_HELPERS = set()


def start_helper(argv, **popen):
    """The one way a helper command starts: in a session of its own (a signal sent to our
    group is for the job) and with an empty signal mask, as a shell would start it (ours
    blocks the stop signals to read them with sigtimedwait; inherited, a SIGTERM could not
    end a hung scontrol). -> the subprocess.Popen."""
    import subprocess
    return subprocess.Popen(argv, start_new_session=True, preexec_fn=_unblock_signals, **popen)


def _unblock_signals():  # pragma: no cover - runs in the forked helper, before exec
    signal.pthread_sigmask(signal.SIG_SETMASK, [])


def end_helpers():
    """At exit: the scheduler queries still running (a hung scontrol) go with us."""
    for proc in list(LIVE_HELPERS):
        _kill_session(proc)


def _kill_session(proc):
    """The one kill helper for helper commands (scheduler queries, sendmail, apprise): each
    runs in its own session, so SIGKILL to the group ends it and whatever it started."""
    import subprocess
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except OSError:
        pass  # already gone (ESRCH): nothing left to end
    try:
        proc.kill()
        proc.communicate(timeout=1.0)
    except (OSError, ValueError, subprocess.TimeoutExpired):
        pass  # a D-state process: leave it, it is in its own session


def make_private_dirs(path):
    """os.makedirs, but each directory it makes (parents too: ~/.local, ~/.local/state) is
    made 0700, which a umask can only narrow (under umask 000 makedirs made the parents
    world-writable). FileExistsError if path itself exists."""
    parent = os.path.dirname(os.path.abspath(path))
    if parent != os.path.abspath(path) and not os.path.isdir(parent):
        try:
            make_private_dirs(parent)
        except FileExistsError:
            pass  # made meanwhile by another process
    os.mkdir(path, 0o700)


# ==== Pure core: values, names, statuses ====

_UNITS_S = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}
_UNITS_B = {"": 1, "b": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}
#: The one definition of a control character: C0 but TAB and LF (a line's own business),
#: DEL, C1 and the Unicode line and paragraph separators. Never shown to a reader as is.
# Bidi embeddings, overrides and isolates too: a job's line must display as what it is.
_CONTROL_RE = re.compile(u"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


#: The longest duration or number of seconds any option takes: a year and a day. Beyond
#: it a deadline overflows what a thread can wait (--smtp-timeout 1e12 was an OverflowError
#: at delivery time) and no job means it.
DURATION_MAX_S = 366 * 86400.0


def parse_duration(text):
    """'90s', '12h', '1h30m', '45' (seconds), or Slurm's '[D-]HH:MM:SS' -> seconds."""
    text = str(text).strip().lower()
    clock = re.match(r"^(?:(\d+)-)?(\d+):(\d\d)(?::(\d\d))?$", text)
    if clock:
        days, *fields = clock.groups()
        hours, minutes, secs = ([0] + [int(f) for f in fields if f is not None])[-3:]
        return _bounded(float(int(days or 0) * 86400 + hours * 3600 + minutes * 60 + secs), text)
    parts = re.findall(r"(\d+(?:\.\d+)?)([smhd]?)", text)
    if not parts or "".join(n + u for n, u in parts) != text:
        raise ConfigError("malformed duration %r (try 90s, 30m, 12h, 1h30m, 7d)" % text)
    return _bounded(float(sum(float(n) * _UNITS_S[u] for n, u in parts)), text)


def _bounded(seconds, text):
    if seconds > DURATION_MAX_S:
        raise ConfigError("%r is over the longest duration gpualert takes (366d)" % text)
    return seconds


#: The largest size an option takes. Beyond it the message's arithmetic (floats) loses whole
#: bytes: --budget 99999999999999999999T never built a message.
SIZE_MAX_BYTES = 1 << 40


def parse_size(text, most=None):
    """'10M', '512k', '1.5G', '2000' (bytes) -> bytes; binary units. most: the largest taken."""
    m = re.match(r"^(\d+(?:\.\d+)?)\s*([bkmgt]?)(?:i?b)?$", str(text).strip().lower())
    if not m:
        raise ConfigError("malformed size %r (try 10M, 512K, 1G)" % text)
    size = float(m.group(1)) * _UNITS_B[m.group(2)]
    if most is not None and size > most:  # inf too: a number too long for a float
        raise ConfigError("%r is over the largest size gpualert takes (1T)" % text)
    return int(size)


def parse_seconds(text):
    try:
        value = float(text)
    except ValueError:
        raise ConfigError("malformed number of seconds %r" % text)
    if value < 0:
        raise ConfigError("negative number of seconds %r" % text)
    if value != value or value == float("inf"):  # nan, inf: no deadline could hold
        raise ConfigError("not a finite number of seconds %r" % text)
    return _bounded(value, text)


def format_duration(seconds):
    """Compact, for subjects: 45s, 2m12s, 12m, 2h13m, 3d04h; None -> '?'. Short times keep
    their seconds: '2m of 1m allowed' for 2m12s of 1m30s misleads."""
    if seconds is None:
        return "?"
    secs = int(max(0, seconds))
    if secs < 60:
        return "%ds" % secs
    if secs < SECONDS_SHOWN_BELOW_S and secs % 60:
        return "%dm%02ds" % (secs // 60, secs % 60)
    if secs < 3600:
        return "%dm" % (secs // 60)
    if secs < 86400:
        return "%dh%02dm" % (secs // 3600, secs % 3600 // 60)
    return "%dd%02dh" % (secs // 86400, secs % 86400 // 3600)


def signal_name(signum):
    """SIGKILL for 9: Linux numbers, whatever machine reads the log (SIGNAL_NAMES)."""
    return SIGNAL_NAMES.get(signum) or "SIG%d" % signum


def exit_status_for(exit_code, exec_error=None):
    """The shell convention: the child's code, 128+N for death by signal N."""
    if exit_code is None:
        code = exec_error[0] if exec_error else None
        if code in (errno.EMFILE, errno.ENFILE, errno.EAGAIN, errno.ENOMEM):
            return EXIT_INTERNAL  # gpualert itself could not start anything
        return EXIT_NOT_FOUND if code == errno.ENOENT else EXIT_NOT_EXECUTABLE
    if exit_code < 0:
        return 128 + (-exit_code)
    return exit_code


def status_for(exit_code, cls, timed_out=False):
    """The stable status word of the subject, for mail filters."""
    if timed_out or cls == "walltime":
        return "TIMEOUT"
    if cls == "preempted":
        return "PREEMPTED"
    if cls == "interrupted":
        return "INTERRUPTED"
    if exit_code == 0:
        return "SUCCESS" if cls is None else "COMPLETED"
    return "FAILED"


def job_name_for(argv, cfg_name=None, scheduler=None):
    """--name, else the script a launcher runs (train.py), else the command's basename."""
    if cfg_name:
        return cfg_name
    sched_name = (scheduler or {}).get("job_name")
    if sched_name and sched_name not in ("bash", "sh", "wrap", "interactive"):
        return sched_name
    for arg in argv[1:]:
        if re.search(r"\.(py|sh|jl|lua|R)$", arg) and not arg.startswith("-"):
            return os.path.basename(arg)
    return os.path.basename(argv[0]) if argv else "command"


def redact_argv(argv):
    """argv as gpualert shows it: the values of secret-looking options (--hf-token X,
    --password=X, -p X: _secret_option), NAME=VALUE arguments with a secret-looking NAME,
    the same inside an argument with spaces (sh -c '... --token X'), and what SECRET_SHAPES
    masks (URL passwords, webhook paths, tokens) become ***. The command itself always runs
    as given."""
    out, hide_next, prev = [], False, ""
    for arg in argv:
        arg, prev = str(arg), os.path.basename(prev)
        if hide_next and not re.match(r"^(?:--[A-Za-z]|-[A-Za-z]$)", arg):  # -SECRET too
            out.append("***")
            hide_next, prev = False, arg
            continue
        hide_next = False
        m = re.match(r"^(-{1,2}[\w.-]+)(=)(.*)$", arg) or re.match(r"^(\+{0,2}[A-Za-z_][\w.-]*)(=)(.*)$", arg)
        if m and _secret_option(m.group(1), prev):  # --token=X, +db.password=X; --token= X
            arg, hide_next = (m.group(1) + "=***", False) if m.group(3) else (arg, True)
        elif m and m.group(1) in USER_OPTIONS and ":" in m.group(3):  # --user=admin:PASS
            arg = "%s=%s:***" % (m.group(1), m.group(3).split(":", 1)[0])
        elif prev in USER_OPTIONS and ":" in arg and not arg.startswith("-"):  # curl -u admin:PASS
            arg = arg.split(":", 1)[0] + ":***"
        elif re.match(r"^-p\S", arg) and prev not in NOT_SECRET_AFTER:  # mysql -pPASS
            arg = "-p***"
        elif re.match(r"^-{1,2}[\w.-]+$", arg) and _secret_option(arg, prev):
            hide_next = True
        elif re.search(r"\s", arg):
            arg = _redact_words(arg)
        prev = arg
        out.append(arg)
    return _mask_args(out)


def _mask_args(args):
    """args with what SECRET_SHAPES masks as ***, read as one text, a line each: a shape
    split over two arguments (wandb login KEY) is masked too. No shape masks a newline."""
    held = mask_secrets("\n".join(args), hold="\0")
    out, at = [], 0
    for arg in args:
        out.append(re.sub("\0+", MASK, held[at:at + len(arg)]))
        at += len(arg) + 1
    return out


def _secret_option(name, prev=""):
    """Is --name (or NAME of NAME=VALUE) one whose value is a secret (SECRET_NAME,
    SECRET_WORDS, SECRET_SHORT unless right after a NOT_SECRET_AFTER command, prev)?"""
    words = re.split(r"[-_.]+", name.lstrip("-").lower())
    return (name in SECRET_SHORT and prev not in NOT_SECRET_AFTER) or \
        bool(SECRET_NAME.search(name)) or any(word in SECRET_WORDS for word in words)


def _redact_words(text):
    """A shell string (sh -c '...'): its words as redact_argv shows them, spaces kept. A
    word in quotes is one word (--password "S with space"), its quotes kept around it. The
    string is masked as one line first: a shape spans words (Authorization: Bearer X)."""
    parts = re.split(r"""((?<!\S)(?:'[^']*'|"[^"]*")[;&|)]*(?!\S)|\S+)""", mask_secrets(text))
    quoted = [_peel(word) for word in parts[1::2]]
    shown = redact_argv([word for _, word, _ in quoted])
    parts[1::2] = [left + word + right for (left, _, right), word in zip(quoted, shown)]
    return "".join(parts)


def _peel(word):
    """(quotes before, the word, quotes and ; & | ) after): string methods, linear in time."""
    core = word.lstrip("'\"")
    left = word[:len(word) - len(core)]
    right = core[len(core.rstrip("'\";&|)")):]
    return left, core[:len(core) - len(right)], right


def quote_argv(argv):
    """A shell-pasteable rendering of argv (shlex.quote without importing shlex)."""
    safe = re.compile(r"^[\w@%+=:,./-]+$")
    return " ".join(a if a and safe.match(a) else "'" + a.replace("'", "'\"'\"'") + "'"
                    for a in argv)


def iso_time(epoch):
    return time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(epoch))


NONFINITE_KEY = "nonfinite_values"  # JSON pointer -> "nan", "inf" or "-inf": what null stands for


def json_ready(payload):
    """payload with every NaN or infinity as null, for strict JSON (Python writes NaN, which
    JSON.parse rejects); a dict payload keeps their text under NONFINITE_KEY, by JSON pointer
    (RFC 6901). Tuples become lists, as json writes them."""
    texts = {}

    def clean(value, path):
        if isinstance(value, float) and (value != value or value in (float("inf"), float("-inf"))):
            texts[path] = "nan" if value != value else ("inf" if value > 0 else "-inf")
            return None
        if isinstance(value, dict):
            return dict((k, clean(v, "%s/%s" % (path, str(k).replace("~", "~0").replace("/", "~1"))))
                        for k, v in value.items())
        if isinstance(value, (list, tuple)):
            return [clean(v, "%s/%d" % (path, i)) for i, v in enumerate(value)]
        return value

    out = clean(payload, "")
    if texts and isinstance(out, dict):
        out[NONFINITE_KEY] = texts
    return out


#: The one table of secret shapes, for all text that leaves the machine: the argv shown
#: (redact_argv), channel URLs (parse_channel: what it masks is what a channel keeps secret)
#: and the job's own lines (the tail, the decisive line). In each, group 1 is kept and the
#: rest of the match becomes ***. Every repeat that can backtrack is bounded, so a long line
#: costs linear time; the shapes are long enough that ordinary words never match. The log on
#: disk is never altered.
_SEGMENT_CHAR = r"[^/\s'\"<>?#]"  # one character of a URL path segment
_AUTH_SCHEME = r"(?:bearer|basic|token|digest|negotiate|ntlm|hmac|apikey)"
#: A value that is no secret: a number (a metric: token=0.95, num_token: 512), an empty word
#: (none, null, false), a placeholder (<pad>, [PAD], ${VAR}, {...}), *** already, or a call
#: in a traceback's source line (authkey=process.current_process().authkey).
_NOT_A_SECRET = (r"(?!(?:[-+]?\.?\d[\d_.,]{0,64}(?:e[-+]?\d{1,4})?|none|null|nil|true|false|yes|no"
                 r"|on|off|unset|\*+|\?+)(?:['\"\s,;&|)}\]]|$)|[<\[{($%]|[A-Za-z_][\w.]{0,64}[(\[])")
SECRET_SHAPES = tuple(re.compile(shape) for shape in (
    # user:PASSWORD@ in any URL: postgres://, https://, ntfy, json, matrix USER:TOKEN@. As
    # urllib reads it, the password runs to the last @ before the host (p@ss@host: p@ss)
    r"(\b[A-Za-z][\w+.-]{0,30}://[^/\s:@'\"<>?#]{0,256}:)[^/\s'\"<>]{1,256}"
    r"(?=@[^/\s@'\"<>?#]{0,256}(?![^/\s'\"<>?#]))",
    # a token as the user alone: matrix(s)://TOKEN@, ntfy(s)://TOKEN@, pover://USERKEY@, and
    # in any URL a user of 32 or more token characters (https://GITHUB_TOKEN@github.com)
    r"(?i)(\b(?:matrixs?|ntfys?|pover)://)[^/\s:@'\"<>]{1,256}(?=@)",
    r"(\b[A-Za-z][\w+.-]{0,30}://)[\w-]{32,256}(?=@)",
    # query parameters named like secrets: ?token=, ?api_key=, Google Chat key= and token=,
    # Matrix access_token=, ntfy auth=, the sig= of Teams' Workflows (Logic Apps) URLs
    r"(?i)([?&;][\w.-]{0,40}(?:%s)[\w.-]{0,40}=)[^&#\s'\"<>]+" % SECRET_PARAM,
    # Slack: hooks.slack.com/services|workflows|triggers/...
    r"(?i)(\bhooks\.slack\.com/[\w-]{1,40}/)[^\s'\"<>?#]+",
    # Discord: [ptb.]discord(app).com/api/webhooks/ID/TOKEN
    r"(?i)(\bdiscord(?:app)?\.com/api/webhooks/)[^\s'\"<>?#]+",
    # Teams (Office 365 connector): .../webhookb2/GUID@TENANT/IncomingWebhook/SECRET/GUID
    r"(?i)(/(?:webhookb2|incomingwebhook)/)[^\s'\"<>?#]+",
    # Telegram: api.telegram.org/bot<TOKEN>/method, tgram://TOKEN/CHAT, and a bare bot
    # token ID:AA...
    r"(?i)(\bapi\.telegram\.org/(?:file/)?bot)%s+" % _SEGMENT_CHAR,
    r"(?i)(\btgram://)%s+" % _SEGMENT_CHAR,
    r"\b(\d{5,12}:)AA[\w-]{30,40}(?![\w-])",
    # Mattermost, Rocket.Chat and other self-hosted chat: HOST/hooks/KEY[/TOKEN]
    r"(?i)(://[\w.:\[\]-]{1,256}/hooks/)[^\s'\"<>?#]+",
    # ntfy: the topic (whoever knows it reads it): ntfy(s)://HOST/TOPIC, https://ntfy.HOST/
    # TOPIC, and ntfy(s)://TOPIC on ntfy.sh
    r"(?i)(\bntfys?://%s{0,256}/|\bhttps?://ntfy\.[\w.:-]{1,256}/)%s+" % (_SEGMENT_CHAR, _SEGMENT_CHAR),
    r"(?i)(\bntfys?://)[^/\s:@'\"<>?#]{1,256}(?![^\s'\"<>?#])",
    # Gotify: gotify(s)://HOST[/PATH]/APPTOKEN
    r"(?i)(\bgotifys?://[^\s'\"<>?#]{0,256}/)%s+" % _SEGMENT_CHAR,
    # Pushover: pover://USERKEY@APPTOKEN
    r"(?i)(\bpover://[^/\s@'\"<>]{0,256}@)%s+" % _SEGMENT_CHAR,
    # tokens by their shape, the first 4 characters kept: Hugging Face, GitHub, GitHub
    # fine-grained, Slack (and its xapp- app tokens), OpenAI-style (sk-proj-..., and not
    # sk-learn-... names: a key has a run of 20 letters and digits, one of them a digit or
    # a capital), AWS (not inside a path), GitLab, ntfy access tokens, JWTs
    r"\b(hf_[A-Za-z0-9])[A-Za-z0-9]{29,}",
    r"\b(gh[pousr]_)[A-Za-z0-9]{30,}",
    r"\b(gith)ub_pat_[A-Za-z0-9_]{30,}",
    r"\b(xox[abposr]|xapp)-[A-Za-z0-9-]{10,}",
    r"(?<![\w/.-])(sk-)(?:(?:proj|ant|svcacct|admin)-[\w-]{20,}"
    r"|(?:\w{1,16}-){0,4}(?=\w{20})(?=[a-z_]{0,100}[A-Z0-9])[\w-]+)",
    r"(?<![\w/-])(AKIA|ASIA)[0-9A-Z]{16}(?![\w-])",
    r"\b(glpa)t-[A-Za-z0-9_-]{20,}",
    r"\b(tk_[a-z0-9])[a-z0-9]{28}\b",
    r"\b(eyJ[A-Za-z0-9_-])[A-Za-z0-9_-]{9,}\.[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]*",
    # the key given to `wandb login KEY` (40 hex digits, local- on a private server)
    r"(?i)(\blogin\s{1,8}(?:--?[\w-]{1,30}\s{1,8}){0,3})(?:local-)?[0-9a-f]{40}\b",
    # a Cookie or Set-Cookie header: all of its value (session=X; other=Y)
    r"(?i)(\b(?:set-)?cookie['\"]?\s{0,8}:\s{0,8}(['\"])?)(?(2)(?:(?!\2)[^\n]){1,1024}|[^'\"\n]{1,1024})",
    # a field with a secret's name, in any dump: YAML `password: X`, NAME=X, Python's
    # Namespace(hf_token='X') and {'api_key': 'X'}, JSON, HTTP headers (Authorization: Bearer
    # X, X-Api-Key: X). The name, in any case and after any prefix (aws_, wandb_, db., PG),
    # ends in the secret's word: password, secret, token (not max_tokens, nor a tokenizer's
    # pad_token = tokenizer.eos_token and other special tokens), credentials, an
    # api/access/private... key, _pwd (not PWD, a path), a word auth or Authorization (after
    # a \n escape too). The value runs to its closing quote (\' in source code too), or to a
    # space or , ; ) } ]. An auth's value that is one lower-case word is its state
    # (Authorization: granted, auth=none).
    r"(?i)((?:(?:(?<![a-z])|(?<=\\[nt]))(?:proxy-)?(authori[sz]ation|auth)"
    r"|passw(?:or)?d|passphrase|secret|(?<!pad_|eos_|bos_|unk_|sep_|cls_)(?<!mask_)token"
    r"|credentials?|(?<=\w[_.-])pwd"
    r"|(?:api|access|private|secret|auth|client|app|wandb|gotify|signing|subscription|account"
    r"|master|encryption|license)[-_.]?key)"
    r"\\{0,2}['\"]?\]?\s{0,8}[:=]\s{0,8}\\{0,2}(['\"])?"  # the name's quotes, : or =, a quote
    r"(?:%s\s{1,8}|(?!%s\s)(?(2)(?!(?-i:[a-z]{1,40})(?:['\"\s,;)}\]]|$)))))"
    % (_AUTH_SCHEME, _AUTH_SCHEME) + _NOT_A_SECRET
    + r"(?(3)(?:(?!\3)[^\n]){1,1024}|[^\s'\",;&|)}\]]{1,1024})",
))


def mask_secrets(text, found=None, hold=None):
    """text with what each SECRET_SHAPES pattern matches shown as its group 1 and ***: the
    one mask for argv shown, channel URLs and the job's lines that leave. found: a list
    that gets each secret masked (parse_channel masks them in a service's answers too).
    hold: a character each masked one becomes instead, so positions stay (_masked_cut)."""
    if text is None or not isinstance(text, str):
        return text
    for shape in SECRET_SHAPES:
        if found is not None:
            found.extend(m.group(0)[len(m.group(1)):] for m in shape.finditer(text))
        text = shape.sub((lambda m: m.group(1) + hold * (m.end() - m.end(1))) if hold else r"\1***", text)
    return text


def _masked_cut(text, lo, hi, margin=4096):
    """text[lo:hi] masked as the whole line would be: a secret cut at either end (a password
    whose @ is past the cut, a webhook whose host is before it) shows none of itself.
    Masked over a margin either side only, so a long line costs no more than this."""
    if lo <= 0 and len(text) <= hi:
        return mask_secrets(text)
    start = max(0, lo - margin)
    held = mask_secrets(text[start:hi + margin], hold="\0")[lo - start:hi - start]
    return re.sub("\0+", MASK, held)


# ---- small pure helpers ----

def _fit(text, limit, mark="...", head=None, tail=0):
    """The one clipping helper: text if it has at most `limit` characters, else its first
    `head` characters (default: as many as fit in `limit` with the mark), `mark`, and its
    last `tail` characters."""
    text = str(text)
    if len(text) <= limit:
        return text
    if head is None:
        head = max(0, limit - len(mark) - tail)
    return text[:head] + mark + (text[-tail:] if tail else "")


def _utf8_text(text):
    """Paths and argv from a non-UTF-8 locale carry surrogate escapes that no mail or JSON
    encoder accepts: their bytes become U+FFFD (any other lone surrogate, '?')."""
    try:
        raw = text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        raw = text.encode("utf-8", "replace")
    return raw.decode("utf-8", "replace")


def _clean(value, limit=None):
    """One line of text: control characters (CR, LF, ESC...) become spaces; bounded length."""
    if value is None:
        return ""
    text = _utf8_text(str(value))
    text = re.sub(r"\s+", " ", _CONTROL_RE.sub(" ", text)).strip()
    return _fit(text, limit) if limit else text


def _describe(exc):
    """An exception as one short line."""
    text = _clean(exc, 300) or repr(exc)
    return "%s: %s" % (type(exc).__name__, text)


def _format_size(n):
    """The one size formatter: 512 -> '512 B', 1536 -> '1.5 KiB', None -> '?'."""
    if n is None:
        return "?"
    value = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if value < 1024 or unit == "TiB":
            return ("%d %s" % (value, unit)) if unit == "B" else ("%.1f %s" % (value, unit))
        value /= 1024.0


def _format_time(epoch):
    if not epoch:
        return "-"
    return time.strftime("%Y-%m-%d %H:%M:%S %z", time.localtime(epoch))


def _classification(result):
    c = getattr(result, "classification", None)
    return make_verdict(None) if c is None else c


def _duration_s(result):
    if not result.start:
        return None
    end = result.end if result.end else time.time()
    return end - result.start


def _exit_brief(result):
    """'exit 1', 'SIGSEGV', 'running', 'not started'."""
    if result.signal_name:
        return _clean(result.signal_name, 16)
    if result.exit_code is not None:
        return "exit %d" % result.exit_code
    if result.status == "STALLED" or result.end is None:
        return "running"
    return "not started"


def _job_label(sched):
    """'4242_7' for an array task, else the job id (detect_scheduler made it), else ''."""
    sched = sched or {}
    return _clean(sched.get("label") or sched.get("job_id"), 40)


def make_result(status, name, **fields):
    """The one constructor of a RunResult (a run, an early notice, watch, test-email, an
    array summary). Fields not given are empty; exit_status and signal_name follow from
    exit_code unless given."""
    code = fields.get("exit_code")
    values = {"argv": [], "host": None, "cwd": None, "start": None, "end": None,
              "exit_code": None, "exit_status": None if code is None else exit_status_for(code),
              "signal_name": signal_name(-code) if code is not None and code < 0 else None,
              "classification": make_verdict(None), "log_path": None, "run_dir": None,
              "tail": [], "rusage": {}, "scheduler": {}, "notes": [], "gpu": {}, "metrics": None,
              "array": None, "digest": None, "requeue": None}
    values.update(fields, status=status, name=name)
    return RunResult(**values)


def _is_under(path, dirs):
    for d in dirs:
        if path == d or path.startswith(d.rstrip(os.sep) + os.sep):
            return True
    return False


# ==== Pure core: rules ====

#: The status words are an interface too (subjects, X-Gpualert-Status, run.json), worst
#: first: the array summary's examples follow this order. Only status_for, the notices
#: (STALLED, WARNING, TEST, DIGEST) and the run's launch stand-in (SILENT: no end told) make them.
STATUSES = ("FAILED", "TIMEOUT", "PREEMPTED", "INTERRUPTED", "SILENT", "STALLED", "WARNING",
            "COMPLETED", "SUCCESS", "TEST", "DIGEST")

#: The class ids are an interface (subjects, mail filters, run.json): never rename.
CLASS_IDS = (
    "cuda_oom", "nccl", "cuda_runtime", "ram_oom", "segfault", "file_not_found",
    "permission", "missing_module", "div_zero", "device_mismatch", "nan_loss",
    "oom_killer", "traceback", "assertion", "runtime_error", "gpu_hardware",
    "disk_full", "walltime", "preempted", "interrupted", "native_abort",
    "exec_failure", "unknown",
)

MAX_LOG_BYTES = 2 * 1024 * 1024   # tail window classify_log reads
MAX_LINE_CHARS = 4096             # longer lines keep head and tail
WC_MIN_BYTES = 32 << 20           # read_tail counts the lines before a tail this far in with wc -l
EVIDENCE_CHARS = 300
REGION_TAIL_LINES = 500           # no traceback: look at this many last useful lines
LOOKBACK_LINES = 20              # lines before a traceback that belong to it
EPISODE_GAP_LINES = 30            # tracebacks closer than this belong to one failure
PREP_LINES = 1000                 # raw lines from the end that are analysed
TRAIL_MAX_LINES = 400             # more useful lines after a traceback: the run went on
TRAIL_PROGRESS_LINES = 5          # or this many progress lines (loss reports, "retrying")
TEARDOWN_MAX_LINES = 10 * TRAIL_MAX_LINES  # a failure's teardown: 64 ranks' watchdog dumps are ~2,600

HINT_GPU_OOM = ("The GPU ran out of memory. Reduce the batch size or sequence length, use gradient "
                "accumulation/checkpointing or mixed precision; PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True "
                "helps with fragmentation.")
HINT_GPU_OOM_FRAGMENTED = ("The GPU ran out of memory.|{reserved_large} is reserved by PyTorch but unallocated "
                           "(fragmentation): set PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True first.|Reduce the batch "
                           "size or sequence length, use gradient accumulation/checkpointing or mixed precision.")
HINT_COLLECTIVE = ("A collective failed or hung. Look for the rank that failed or straggled first (its own "
                   "traceback, OOM or dead node); rerun with NCCL_DEBUG=INFO; raise the timeout only if a rank "
                   "is legitimately slow (e.g. rank-0-only checkpointing or evaluation).")
HINT_COLLECTIVE_TIMEOUT = ("A collective did not complete in time:|{op}|timed out after {timeout_dur}.|One rank never joined "
                           "it: look for the rank that failed or straggled first (its own traceback, OOM, a dead node, "
                           "rank-0-only checkpointing or evaluation). To see which rank and call: rerun with NCCL_DEBUG=INFO "
                           "TORCH_DISTRIBUTED_DEBUG=DETAIL (and TORCH_NCCL_TRACE_BUFFER_SIZE=2000 for the flight "
                           "recorder); raise init_process_group(timeout=...) only if a rank is legitimately slow.")
HINT_CUDA_ERROR = ("A CUDA kernel or library call failed. Rerun with CUDA_LAUNCH_BLOCKING=1 (and "
                   "TORCH_USE_CUDA_DSA) to find the real call; device-side asserts are usually out-of-range "
                   "indices or labels.")
HINT_HOST_RAM = ("Host RAM ran out. Load data lazily or memory-mapped, lower num_workers/prefetch, or "
                 "request more memory (--mem).")
HINT_OOM_KILLER = ("The kernel or cgroup OOM killer killed the process (host RAM, not GPU). Request more "
                   "memory (--mem), lower num_workers, or check sacct MaxRSS / dmesg.")
HINT_GPU_HARDWARE = ("The GPU or its link reported a hardware fault. Drain/report the node to the admins, "
                     "and resubmit excluding it (--exclude); resume from the last checkpoint.")
HINT_DISK_FULL = "A filesystem is full or over quota. Free space (df -h, quota) or write checkpoints elsewhere."
HINT_TIME_LIMIT_USED = ("The job hit its time limit|({limit_dur}).|It ran {used_dur}.|Resume from the last checkpoint "
                        "and ask for more time, or checkpoint more often.")
HINT_TIME_LIMIT = ("The job hit its time limit. Resume from the last checkpoint and ask for more time, or "
                   "checkpoint more often.")
HINT_PREEMPTED = ("The scheduler preempted the job. Resubmit or requeue (--requeue) and resume from the "
                  "last checkpoint; checkpoint on SIGTERM/SIGUSR1.")
HINT_NODE_FAIL = ("A node of the job failed and Slurm ended the job (sacct shows NODE_FAIL; slurmctld's log "
                  "says why). Resubmit, excluding that node if it fails again (--exclude), and resume from the "
                  "last checkpoint; --requeue lets Slurm do it.")
HINT_INTERRUPTED = "The run was interrupted (Ctrl-C, scancel or a signal). Resume from the last checkpoint if wanted."
HINT_NAN_LOSS = ("The loss diverged to NaN/Inf. Lower the learning rate, add warm-up and gradient clipping, "
                 "check inputs for NaN, or prefer bf16 over fp16.")
HINT_FILE_MISSING = ("A file or directory was missing. Check the path, the working directory and that the data "
                     "is staged on this node.")
HINT_PERMISSION = ("Access was denied. Check the path's permissions/ownership and that you write to your own "
                   "scratch space.")
HINT_MISSING_MODULE = ("A Python module or shared library could not be imported. Activate the right environment "
                       "(module load / conda activate) in the job script and install the package.")
HINT_DEVICE_MISMATCH = ("Tensors or modules are on different devices. Move the model and every input to the same "
                        "device (.to(device)), including tensors created inside forward.")

# (rule_id, class, pattern, detail template, hint) -- first match wins, specific above
# generic. Patterns are compiled with re.M and searched over the decisive part of the
# log (see classify_text). Detail templates: "|" separates parts, a part whose {group}
# did not match is dropped, parts are joined with ", "; "" means the matched text.
FAILURE_RULES = (
    # Scheduler end-of-job lines come after whatever the program printed: decisive.
    ("slurm_time_limit", "walltime",
     r"\*\*\* (?:JOB|STEP) (?P<job>[\w.+-]+) (?:ON \S+ )?CANCELLED(?: AT \S+)? DUE TO TIME LIMIT",
     "Slurm time limit|job {job}", HINT_TIME_LIMIT),
    # PBS Pro / Torque enforce walltime and cput; Torque's and Moab's job mail say it in words.
    ("pbs_walltime", "walltime",
     r"PBS: job killed: (?P<kind>walltime|cput) (?P<used_s>\d+) exceeded limit (?P<limit_s>\d+)"
     r"|Job exceeded its walltime limit\. Job was aborted|MOAB_INFO: +job exceeded wallclock limit",
     "PBS {kind} {used_dur} > limit {limit_dur}", HINT_TIME_LIMIT_USED),
    ("lsf_runlimit", "walltime",
     r"(?P<term>TERM_RUNLIMIT|TERM_CPULIMIT): job killed after reaching LSF (?:run time|CPU usage) limit",
     "LSF {term}", HINT_TIME_LIMIT),
    # Grid Engine's h_rt/s_rt enforcement (sge_execd job messages).
    # ... and qacct's failure code 37 (SSTATE_QMASTER_ENFORCED_LIMIT: "ran, but killed due to exceeding
    # run time limit"; qacct's text also lists h_cpu and h_vmem)
    ("sge_wallclock", "walltime",
     r"\bjob (?P<job>[\d.]+) exceeded (?P<kind>hard|soft) wallclock time|\bqmaster enforced h_rt\b",
     "Grid Engine {kind} wallclock limit (h_rt/s_rt)|job {job}", HINT_TIME_LIMIT),
    # A Kubernetes Job past its spec.activeDeadlineSeconds (kube-controller-manager's event).
    ("k8s_deadline", "walltime", r"Job was active longer than specified deadline",
     "Kubernetes Job deadline (activeDeadlineSeconds)", HINT_TIME_LIMIT),
    ("slurm_preempted", "preempted",
     r"\*\*\* (?:JOB|STEP) (?P<job>[\w.+-]+) (?:ON \S+ )?CANCELLED(?: AT \S+)? DUE TO (?:PREEMPTION|JOB REQUEUE)",
     "Slurm preemption|job {job}", HINT_PREEMPTED),
    # slurmstepd's words when another node of the job failed (the job's state becomes NODE_FAIL):
    # the scheduler took the allocation away, as a preemption does, and the remedy is the same.
    ("slurm_node_failure", "preempted",
     r"\*\*\* (?:JOB|STEP) (?P<job>[\w.+-]+) (?:ON \S+ )?CANCELLED(?: AT \S+)? DUE TO NODE FAILURE",
     "Slurm node failure|job {job}", HINT_NODE_FAIL),
    ("lsf_preempted", "preempted", r"(?P<lsf>TERM_PREEMPT): [Jj]ob killed after preemption",
     "LSF preemption ({lsf})", HINT_PREEMPTED),
    # PBS Pro's scheduler names how it preempted a job (pbs_sched: "Job preempted by requeuing",
    # "... by checkpointing", "... by suspension", "... by deletion"); schedulers' notices say
    # "preempted by a higher priority job".
    ("pbs_preempted", "preempted",
     r"\bJob preempted by (?P<how>requeuing|checkpointing|suspension|deletion)\b"
     r"|\b[Jj]ob (?:was |has been )?preempted by (?:an? )?higher[- ]priority job",
     "PBS preemption|by {how}", HINT_PREEMPTED),
    # Clouds and Kubernetes reclaim the machine: a spot/preemptible VM or a node shutdown.
    ("cloud_preempted", "preempted",
     r"Preempted in order to admit critical pod|\bPod (?:\S+ )?was terminated in response to imminent node shutdown"
     r"|\b[Ss]pot (?:[Ii]nstance |VM |[Nn]ode )?(?:[Ii]nterruption|[Rr]eclaim|[Tt]ermination) [Nn]otice"
     r"|\b[Ss]pot [Ii]nstance [Ii]nterruption|\b[Ii]nstance (?:was|has been) preempted"
     r"|\b[Pp]reemption notice received"
     # kube-scheduler's event on the victim pod (pkg/scheduler/framework/preemption)
     r"|\bPreempted by (?:pod )?\S+ on node \S+"
     # the providers' notices as a watcher prints them: AWS spot/instance-action JSON, GCE's
     # instance/preempted metadata turning TRUE, an Azure scheduled event of type Preempt
     r"|\{\s*\"action\"\s*:\s*\"terminate\"\s*,\s*\"time\"\s*:"
     r"|\binstance/preempted\b[^\n]*?\bTRUE\b|\"EventType\"\s*:\s*\"Preempt\""
     # GCE's operation type for a reclaimed spot/preemptible VM (gcloud compute operations list)
     r"|\bcompute\.instances\.preempted\b",
     "", "The cloud reclaimed the machine (spot/preemptible capacity). Resume from the last checkpoint; "
         "checkpoint on the provider's notice (AWS gives 2 min, GCP about 30 s)."),
    # A job that asked to be requeued (Lightning's SLURM auto-requeue, submitit) was ended early
    # on purpose; submitit says whether it was the time limit.
    ("job_timed_out", "walltime",
     r"Job has timed out\. Ran (?P<used_min>\d+) minutes out of requested (?P<limit_min>\d+) minutes"
     r"|: this job is timed-out\.",
     "timed out|ran {used_dur} of {limit_dur}",
     "The job reached its time limit|({limit_dur})|and was checkpointed for a requeue. Check that the "
     "requeued job resumed; ask for more time if it keeps timing out."),
    ("requeued", "preempted",
     r"Handling auto-requeue signal|Requeued SLURM job: (?P<job>\S+)|: this job is preempted\."
     r"|Exiting gracefully after preemption/timeout",
     "requeued|job {job}",
     "The job was stopped early and requeued (SLURM auto-requeue / submitit). Check that the requeued job "
     "resumed from its checkpoint."),
    # coreutils timeout(1) --verbose: the command's own time limit.
    ("timeout_cmd", "walltime", r"^timeout: sending signal (?P<sig>\w+) to command",
     "timeout(1) sent {sig}",
     "timeout(1) stopped the command at its time limit. Give it more time (timeout DURATION) or "
     "checkpoint before it; resume from the last checkpoint."),
    # Host OOM killer: the kernel, the cgroup or the scheduler says so.
    ("slurm_oom_kill", "oom_killer", r"Detected (?P<n>\d+) oom[-_ ]kill event",
     "{n} oom-kill event(s) (Slurm cgroup)", HINT_OOM_KILLER),
    ("kernel_oom_kill", "oom_killer",
     r"(?:Out of memory"
     r"|Memory cgroup out of memory): Kill(?:ed)? process (?P<pid>\d+)(?: \((?P<comm>[^)]*)\))?",
     "kernel OOM killer|process {comm}|pid {pid}", HINT_OOM_KILLER),
    ("sched_mem_limit", "oom_killer",
     r"srun: error: \S+: tasks? [\d,-]+: Out Of Memory|Exceeded job memory limit"
     r"|exceeded (?:virtual )?memory limit \(\d+ > \d+\), being killed"
     r"|TERM_MEMLIMIT: job killed after reaching LSF memory usage limit"
     r"|PBS: job killed: (?:p?mem|vmem) (?P<used>\d+kb) exceeded limit (?P<limit>\d+kb)",
     "", HINT_OOM_KILLER),
    # Ray's memory monitor and Kubernetes kill a worker or a container at its memory limit.
    ("container_oom_kill", "oom_killer",
     r"Task was killed due to the node running low on memory"
     r"|Workers \(tasks / actors\) killed due to memory pressure \(OOM\)|\bOOMKilled\b",
     "", HINT_OOM_KILLER),
    # A bare cancel line: below the memory-limit kills, which Slurm follows with one.
    ("slurm_cancelled", "interrupted",
     r"\*\*\* (?:JOB|STEP) (?P<job>[\w.+-]+) (?:ON \S+ )?CANCELLED AT \S+ \*\*\*",
     "cancelled (scancel)|job {job}", HINT_INTERRUPTED),
    ("lsf_owner_kill", "interrupted",
     r"(?P<term>TERM_(?:FORCE_)?OWNER): [Jj]ob killed by owner|(?P<term2>TERM_(?:FORCE_)?ADMIN): [Jj]ob killed by root",
     "LSF {term}|LSF {term2}", HINT_INTERRUPTED),
    ("dataloader_killed", "oom_killer", r"DataLoader worker \(pid[^)]*\) is killed by signal: Killed",
     "DataLoader worker killed (SIGKILL)", HINT_OOM_KILLER),
    ("shell_killed", "oom_killer",
     r"^Killed\s*$|: line \d+: +\d+ Killed\b|: tasks? [\d,-]+: Killed\b",
     "process killed (SIGKILL), most likely by the OOM killer", HINT_OOM_KILLER),
    ("sigkill_seen", "oom_killer",
     r"Signal 9 \(SIGKILL\) received by PID (?P<pid>\d+)|terminated with signal SIGKILL"
     r"|<Signals\.SIGKILL: 9>|exitcode\s*: -9\b|failed \(exitcode: -9\)|exits with return code = -9\b"
     r"|exited on signal 9\b",
     "a process was killed by SIGKILL, most likely by the OOM killer", HINT_OOM_KILLER),
    # GPU hardware: only the Xids NVIDIA documents as hardware/ECC/NVLink/bus faults.
    ("xid_hardware", "gpu_hardware",
     r"\bXid \([^)]*\): (?P<xid>48|61|62|63|64|74|79|92|94|95|119|120|121|123|140)\b",
     "Xid {xid}", HINT_GPU_HARDWARE),
    ("gpu_off_bus", "gpu_hardware",
     r"GPU has fallen off the bus|GPU is lost|Unable to determine the device handle for GPU",
     "", HINT_GPU_HARDWARE),
    # The driver could not bring a GPU up (the kernel's NVRM line, which job prologues and
    # health checks print): the node's GPU is unusable, whatever CUDA then says.
    ("gpu_init_failed", "gpu_hardware", r"\bRmInitAdapter failed!", "the GPU failed to initialise", HINT_GPU_HARDWARE),
    ("ecc_uncorrectable", "gpu_hardware",
     r"uncorrectable ECC error encountered|[Uu]ncorrectable ECC error|Double Bit ECC Error"
     r"|CUDA_ERROR_ECC_UNCORRECTABLE|cudaErrorECCUncorrectable",
     "uncorrectable ECC error", HINT_GPU_HARDWARE),
    ("nvlink_uncorrectable", "gpu_hardware",
     r"uncorrectable NVLink error|CUDA_ERROR_NVLINK_UNCORRECTABLE|cudaErrorNvlinkUncorrectable",
     "uncorrectable NVLink error", HINT_GPU_HARDWARE),
    # Interrupts (a person or a launcher stopped the run).
    ("keyboard_interrupt", "interrupted",
     r"^\s*KeyboardInterrupt\b|Detected KeyboardInterrupt, attempting graceful shutdown",
     "KeyboardInterrupt (Ctrl-C)", HINT_INTERRUPTED),
    # A handler that caught the stop signal and exited cleanly: counted on exit-0 runs only
    # (a failed run's exit status or the wrapper's own signal facts already say it).
    # A signal the program says it reloads on or ignores (SIGHUP's daemon idiom) did not stop it.
    ("graceful_signal", "interrupted",
     r"\b(?:[Rr]eceived|[Cc]aught|[Gg]ot|[Hh]andling)(?: (?:the )?signal)?:? (?P<sig>SIG(?:TERM|INT|HUP))\b"
     r"(?![^\n]*\b(?:[Rr]eload|[Ii]gnor))"
     r"|\b(?P<sig2>SIG(?:TERM|INT|HUP)) (?:received|caught)\b(?![^\n]*\b(?:[Rr]eload|[Ii]gnor))"
     r"|\b(?:[Rr]eceived|[Cc]aught|[Gg]ot|[Hh]andling) signal (?P<num>15|2|1)\b(?![^\n]*\b(?:[Rr]eload|[Ii]gnor))"
     # "except KeyboardInterrupt: print('Keyboard interrupt received, saving ...')"
     r"|\b(?P<kbd>[Kk]eyboard ?[Ii]nterrupt(?:ion)?|Ctrl-C)(?: signal)? (?:received|caught|detected)\b"
     r"(?![^\n]*\b(?:[Rr]eload|[Ii]gnor))",
     "{sig} handled|{sig2} handled|signal {num} handled|{kbd} handled", HINT_INTERRUPTED),
    ("launcher_signal", "interrupted",
     r"SignalException: Process (?P<pid>\d+) got signal: (?P<sig>\d+)",
     "launcher got signal {sig}", HINT_INTERRUPTED),
    # The command could not be started.
    ("cmd_not_found", "exec_failure",
     r"^(?:\S+: line \d+|(?:\S*/)?(?:ba|da|z"
     r"|k)?sh(?:: line \d+)?): (?P<cmd>[^:\n]+): (?P<why>command not found"
     r"|No such file or directory"
     r"|cannot execute: required file not found|cannot execute binary file(?:: Exec format error)?)\s*$"
     r"|^(?:\S*/)?(?:da)?sh: \d+: (?:exec: )?(?P<cmd2>\S+): not found|bad interpreter: (?P<why2>[^\n]+)"
     # zsh and fish put the reason first; MPICH's hydra proxy reports execvp's errno
     r"|^zsh: (?P<why10>command not found|permission denied|no such file or directory|exec format error): (?P<cmd10>\S+)"
     r"|^fish: Unknown command:? (?P<cmd11>\S+)|\bexecvp error(?: on file (?P<cmd9>\S+))? \((?P<why9>[^)\n]+)\)"
     r"|^(?:\S*/)?env: ['\u2018\"]?(?P<cmd4>[^'\u2019\":\n]+)['\u2019\"]?: (?P<why4>No such file or directory"
     r"|Permission denied)\s*$|^(?P<cmd5>[\w.+-]+): command not found\s*$"
     r"|execve\(\): (?P<cmd3>[^:\n]+): (?P<why3>[^\n]+)|\[Errno 8\] Exec format error"
     r"|^exec (?P<cmd6>\S+): exec format error|exec user process caused:? \"?(?P<why8>exec format error|no such file or directory|permission denied)|(?:exec: |FATAL: +)\"(?P<cmd7>[^\"\n]+)\": executable file not found in \$PATH"
     r"|\b(?:mpirun|mpiexec|prterun) was unable to (?:launch the specified application as it could not access"
     r"|find the specified executable file)",
     "{cmd}: {why}|{cmd2}: not found|bad interpreter: {why2}|execve {cmd3}: {why3}|env: {cmd4}: {why4}"
     "|{cmd5}: command not found|{cmd6}: exec format error|container entrypoint: {why8}|{cmd7}: executable file not found in $PATH"
     "|{cmd10}: {why10}|{cmd11}: unknown command|execvp {cmd9}|{why9}",
     "Check the command name, PATH, the #! line and the execute bit, and the environment your job "
     "script activates."),
    # The shell could not open a path: a redirect's target (`> /shared/metrics.log`) or a script
    # without the execute bit. A permission error; exit 126 (the command itself could not run)
    # makes it exec_failure (_as_exec_failure), as bash's own status says.
    ("shell_permission", "permission",
     r"^(?:\S+: line \d+|(?:\S*/)?(?:ba|da|z|k)?sh(?:: line \d+)?): (?P<path>[^:\n]+): Permission denied\s*$",
     "permission denied: {path}",
     "The shell could not open {path}: check the permissions of the file and its directory (a redirect "
     "target must be writable), or write somewhere you own."),
    # The interpreter started and could not open the script: a missing file (an unreadable one is
    # a permission error, left to the permission rule). Both blind sets label it by its errno.
    ("script_not_found", "file_not_found",
     r"can't open file '(?P<path>[^']*)': \[Errno 2\] No such file or directory",
     "script not found: {path}", "The script path is wrong: check the working directory and the file name."),
    # Accelerator memory.
    ("cuda_oom", "cuda_oom",
     r"(?:CUDA|HIP|MPS backend|XPU) out of memory\.?(?: Tried to allocate (?P<size>[\d.]+ ?[KMGT]?i?B)\.?)?"
     r"(?:\s?\(GPU (?P<gpu>\d+); (?P<total>[\d.]+ [KMGT]iB) total capacity"
     r"|\s?GPU (?P<gpu2>\d+) has a total capacity of (?P<total2>[\d.]+ [KMGT]iB)"
     r" of which (?P<free>[\d.]+ [KMGT]iB) is free)?"
     r"(?:[^\n]*?and (?P<reserved_mem>[\d.]+ [KMGT]iB) is reserved by PyTorch but unallocated)?",
     "tried to allocate {size}|GPU {gpu} {total} total|GPU {gpu2} {total2} total, {free} free", HINT_GPU_OOM_FRAGMENTED),
    ("cuda_error_oom", "cuda_oom",
     r"CUDA error: out of memory|CUDA_ERROR_OUT_OF_MEMORY|cudaErrorMemoryAllocation"
     r"|Cuda failure '?out of memory|CUBLAS_STATUS_ALLOC_FAILED|CUDNN_STATUS_ALLOC_FAILED"
     r"|cuda runtime error \(2\) : out of memory|THCudaCheck FAIL file=\S+ line=\d+ error=2 : out of memory"
     r"|No executable batch size found, reached zero"
     r"|No available memory for the cache blocks|Dst tensor is not initialized",
     "", HINT_GPU_OOM),
    ("xla_oom", "cuda_oom",
     r"(?:RESOURCE_EXHAUSTED|Resource exhausted|ResourceExhaustedError):? .*?(?:[Oo]ut of memory|Ran out of memory"
     r"|[Ff]ailed to allocate (?:request for|memory)"
     # TPU: "Attempting to reserve 10.51G at the bottom of memory. That was not possible."
     r"|Attempting to (?:reserve|allocate) \S+(?: at the bottom of memory)?\. That was not possible)"
     r"(?: while trying to allocate (?P<alloc_bytes>\d+) bytes)?",
     "tried to allocate {alloc_size}", HINT_GPU_OOM),
    ("tf_oom", "cuda_oom",
     r"OOM when allocating tensor(?: with shape\s?\[(?P<shape>[^\]]*)\])?(?![^\n]*device:CPU:\d+ by allocator)",
     "OOM allocating tensor|shape [{shape}]", HINT_GPU_OOM),
    # Collectives.
    ("nccl_watchdog", "nccl",
     r"(?:Watchdog caught"
     r"|Caught) collective operation timeout: WorkNCCL\((?:SeqNum=\d+, )?(?:OpType=)?(?P<op>\w+)"
     r"(?:[^)]*?Timeout\(ms\)=(?P<timeout_ms>\d+))?"
     # the heartbeat monitor and newer watchdog wordings (ProcessGroupNCCL.cpp)
     r"|ProcessGroupNCCL's watchdog got stuck for \d+ seconds|Heartbeat monitor timed out"
     r"|Timeout at NCCL work: \d+|Exception \(either an error or timeout\) detected by watchdog at work",
     "watchdog timeout|{op}|{timeout_ms} ms ({timeout_dur})", HINT_COLLECTIVE_TIMEOUT),
    # NCCL's own report of a failed InfiniBand/RoCE or socket transfer (transport/net_ib.cc,
    # ib_plugin.c; misc/socket.cc) or verbs call (misc/ibvwrap.cc "Call to ibv_... failed with
    # error ..."): printed at WARN level, the first sign of a network fault.
    ("nccl_transport", "nccl",
     r"NET/IB ?: Got completion from peer (?P<peer>\S+) with (?:error |status=)(?P<status>\d+)"
     r"|NET/(?:IB|Socket) ?: (?P<what>[^\n]*?(?:failed|[Ee]rror)[^\n]{0,80})"
     r"|Call to (?P<verb>ibv_\w+) failed(?: with error (?P<err>[^\n]{1,60}))?",
     "NCCL network transport error|status {status} from peer {peer}|{what}|{verb} failed|{err}", HINT_COLLECTIVE),
    ("nccl_result", "nccl",
     r"\b(?P<code>ncclUnhandledCudaError|ncclSystemError|ncclInternalError|ncclInvalidArgument"
     r"|ncclInvalidUsage|ncclRemoteError)\b",
     "{code}", HINT_COLLECTIVE),
    ("nccl_error", "nccl",
     r"NCCL error in: [^,\n]+, (?P<what>[^,(\n]+?)(?: \(run with NCCL_DEBUG|, NCCL version|$)"
     r"|\bNCCL error: (?P<what2>[^\n]+)"
     r"|NCCL operation \w+\([^\n]*?\) failed: (?P<what3>[^.;(\n]+)|Error invoking NCCL: (?P<what4>[^\n]+)"
     r"|\bNCCL Error \d+: (?P<what5>[^(\n]+)",
     "NCCL error: {what}|{what2}|{what3}|{what4}|NCCL error: {what5}", HINT_COLLECTIVE),
    ("nccl_aborted", "nccl",
     r"NCCL communicator was aborted|Some NCCL operations have failed or timed out"
     r"|DistBackendError(?:: (?P<msg>.+))?",
     "DistBackendError: {msg}", HINT_COLLECTIVE),
    ("dist_store", "nccl",
     r"(?P<exc>DistStoreError|DistNetworkError|Rendezvous\w*Error)(?:: (?P<msg>.+))?"
     r"|The client socket has timed out after \d+\w* while trying to connect"
     # c10d's store-based barrier, the NCCL id exchange through the store, TCPStore, gloo's mesh
     r"|Timed out initializing process group in store based barrier"
     r"|retrieving ncclUniqueId from \[\d+\] via c10d key-value store|\bSocket Timeout\b|Gloo connectFullMesh failed",
     "{exc}: {msg}", HINT_COLLECTIVE),
    # gloo's view of a peer that went away: usually the consequence of another rank's failure.
    # gloo's TCP pair (gloo/transport/tcp/pair.cc): a peer that went away, or "Read error"/"Write
    # error" with the socket's strerror (a reset connection).
    ("gloo_peer_lost", "nccl",
     r"gloo[^\]]*\] (?P<what>Connection closed by peer|Timed out waiting|(?:Read|Write) error \S+: [^\n]{1,80})",
     "gloo: {what}", HINT_COLLECTIVE),
    # Horovod's SHUT_DOWN_ERROR (horovod/common/operations.cc) names no cause: another rank's
    # exception, printed before it, is the root cause when there is one.
    ("horovod_shutdown", "nccl",
     r"Horovod has been shut down\. This (?:was|has been) caused by an exception on one of the rank"
     r"|Horovod background loop uncaught exception: (?P<what>[^\n]{1,160})",
     "Horovod shut down|{what}", HINT_COLLECTIVE),
    # Open MPI's TCP transport (opal/mca/btl/tcp: "connect() to ... failed", "readv failed: Connection
    # reset by peer"): a peer that is gone, usually the consequence of another rank's failure.
    # ... its UCX layer (ompi/mca/pml/ucx/pml_ucx.c) and the errhandler's fatal banner in a collective.
    ("mpi_transport", "nccl", r"\[btl_tcp\w*\.c:\d+:\w+\] (?P<what>[^\n]*?(?:failed|[Ee]rror)[^\n]*)"
     r"|\bpml_ucx\.c:\d+ +Error: (?P<ucx>[^\n]+)|\*\*\* An error occurred in (?P<op>MPI_\w+)",
     "Open MPI TCP transport: {what}|Open MPI UCX: {ucx}|Open MPI error in {op}", HINT_COLLECTIVE),
    # CUDA runtime / libraries.
    ("cuda_device_assert", "cuda_runtime",
     r"block: \[\d+,\d+,\d+\], thread: \[\d+,\d+,\d+\] Assertion `(?P<cond>[^`]*)` failed",
     "device-side assert `{cond}`", HINT_CUDA_ERROR),
    ("cuda_error", "cuda_runtime",
     r"CUDA (?P<drv>driver )?error: (?P<err>[^\n]+?)(?:\s*$|\. ?CUDA kernel errors)"
     r"|Triton Error \[CUDA\]: (?P<err2>[^\n]+?)\s*$"
     # PyTorch < 1.0 (THC): "cuda runtime error (59) : device-side assert triggered at ...cu:26"
     r"|\bcuda runtime error \(\d+\) : (?P<err3>[^\n]+?)(?: at \S+)?\s*$"
     r"|THCudaCheck FAIL file=\S+ line=\d+ error=\d+ : (?P<err4>[^\n]+?)\s*$",
     "CUDA {drv}error: {err}|Triton CUDA error: {err2}|CUDA error: {err3}|CUDA error: {err4}", HINT_CUDA_ERROR),
    ("cuda_lib_error", "cuda_runtime",
     r"\b(?P<code>CUDA_ERROR_\w+|cudaError\w+|CUBLAS_STATUS_\w+|CUDNN_STATUS_\w+|CUFFT_\w+|CUSOLVER_STATUS_\w+"
     r"|CUSPARSE_STATUS_\w+|CURAND_STATUS_\w+)"
     r"|cuDNN error: (?P<code2>\w+)|(?P<lib>cublas|cudnn|cufft|cusolver) runtime error : (?P<msg>[^\n]+)"
     r"|(?P<engine>GET was unable to find an engine to execute this computation"
     r"|Unable to find a valid cuDNN algorithm to run convolution|cuDNN Frontend error)"
     # TensorFlow's stream executor: cuBLAS/cuDNN calls that failed (InternalError / UnknownError)
     r"|(?P<tf>Blas \w*GEMM\w* launch failed|cuDNN launch failure|Failed to get convolution algorithm\. This is probably"
     r" because cuDNN failed to initialize|Could not create cudnn handle|DNN library is not found)"
     # numba and CuPy raise the driver's or runtime's error as their own exception types
     r"|\b(?P<pyexc>CudaAPIError|CudaSupportError|CUDADriverError|CUDARuntimeError): (?P<pymsg>[^\n]+)",
     "{code}|{code2}|{lib} runtime error: {msg}|cuDNN: {engine}|{tf}|{pyexc}: {pymsg}", HINT_CUDA_ERROR),
    ("cuda_unavailable", "cuda_runtime",
     r"Found no NVIDIA driver on your system|No CUDA GPUs are available"
     r"|CUDA driver version is insufficient for CUDA runtime version|CUDA driver initialization failed"
     r"|The NVIDIA driver on your system is too old|Unexpected error from cudaGetDeviceCount\(\)"
     r"|CUDA unknown error - this may be due to an incorrectly set up environment"
     r"|Attempting to deserialize object on a CUDA device but torch\.cuda\.is_available\(\) is False"
     r"|Failed to initialize NVML: Driver/library version mismatch",
     "", "CUDA is not usable on this node. Check the GPU request (--gres/--gpus), the driver and that "
         "the CUDA build of the framework is installed."),
    # Host memory.
    ("shm_exhausted", "native_abort",
     r"insufficient shared memory \(shm\)|DataLoader worker \(pid[^)]*\) is killed by signal: Bus error"
     r"|unable to (?:write to file|allocate shared memory\(shm\) for file) </torch_",
     "shared memory (/dev/shm) exhausted",
     "/dev/shm is too small for the DataLoader workers. Lower num_workers, or raise the shm size "
     "(docker --shm-size)."),
    ("host_oom", "ram_oom",
     # the name's prefix is bounded: an unbounded \w* before a literal is quadratic on a long word
     r"(?:\w{0,40}MemoryError: )?Unable to allocate (?P<size>[\d.]+ [KMGTP]?i?B) for an array"
     r"|(?<!\w)\w{0,40}MemoryError\b(?::\s?(?P<msg>.+))?"
     r"|DefaultCPUAllocator: (?:can't allocate memory"
     r"|not enough memory)(?:: you tried to allocate (?P<alloc_bytes>\d+) bytes)?"
     r"|std::bad_alloc|\[Errno 12\] Cannot allocate memory|Cannot allocate memory \(12\)"
     r"|\b(?:fork|vfork|clone|mmap|posix_spawn)(?:\(\))?(?: failed)?: Cannot allocate memory"
     r"|OOM when allocating tensor with shape\s?\[[^\]]*\][^\n]*? on \S*device:CPU:\d+ by allocator",
     "{msg}|unable to allocate {size}|tried to allocate {alloc_size}", HINT_HOST_RAM),
    # A full disk (a writer that aborts or crashes after ENOSPC is still a full disk).
    # Go programs (docker, containerd) write strerror in lower case; SQLite says SQLITE_FULL in words.
    ("no_space_left", "disk_full",
     r"[Nn]o space left on device|\[Errno 28\]|\bENOSPC\b|\bdatabase or disk is full\b",
     "no space left on device", HINT_DISK_FULL),
    # A write the device took only part of (tar's "Wrote only 4096 of 10240 bytes"): the
    # file system is full (GNU tar, src/system.c, sys_write_archive_error / write_error_details).
    ("short_write", "disk_full", r"\bWrote only (?P<got>\d+) of (?P<want>\d+) bytes",
     "short write: only {got} of {want} bytes written (file system full?)",
     "A write stopped part-way: the file system is most likely full (check df). A per-file size limit "
     "(CephFS's max_file_size, ulimit -f) writes the same words."),
    ("disk_quota", "disk_full", r"Disk quota exceeded|\[Errno 122\]|\bEDQUOT\b",
     "disk quota exceeded", HINT_DISK_FULL),
    # A program that checks free space before writing (datasets, installers, checkpointers).
    ("disk_space_check", "disk_full",
     r"\b(?:[Nn]ot enough|[Ii]nsufficient) (?:free )?disk space\b(?:[^\n]*?[Nn]eeded:? (?P<needed>[\d.]+ ?[KMGTP]i?B))?"
     r"|\b[Oo]ut of disk space\b",
     "not enough disk space|needed {needed}", HINT_DISK_FULL),
    ("checkpoint_write", "disk_full",
     r"PytorchStreamWriter failed writing file (?P<file>[^\s:]+)|unexpected pos \d+ vs \d+",
     "checkpoint write failed|{file}", HINT_DISK_FULL),
    # Native crashes.
    ("segfault", "segfault",
     r"Segmentation fault|(?<!or )\bSIGSEGV\b(?!,| or )|<Signals\.SIGSEGV: 11>|exitcode\s*: -11\b|failed \(exitcode: -11\)"
     r"|exits with return code = -11\b|exited on signal 11\b"
     r"|DataLoader worker \(pid[^)]*\) is killed by signal: Segmentation fault"
     r"|Unexpected segmentation fault encountered in (?:DataLoader )?worker",
     "", "Native code crashed (a C/C++/CUDA extension or a library mismatch). Get a backtrace with "
         "PYTHONFAULTHANDLER=1 or gdb; check versions of compiled extensions."),
    ("native_abort", "native_abort",
     r"Fatal Python error: (?:Aborted|Bus error|Illegal instruction)|Aborted \(core dumped\)|Bus error \(core dumped\)"
     r"|Illegal instruction \(core dumped\)"
     r"|(?<!or )\bSIG(?:ABRT|BUS|ILL)\b(?!,| or )|exitcode\s*: -(?:4|6|7)\b"
     r"|failed \(exitcode: -(?:4|6|7)\)|exits with return code = -(?:4|6|7)\b"
     r"|exited on signal [467]\b"
     r"|terminate called after throwing an instance of '(?P<type>[^']+)'"
     r"|terminate called without an active exception"
     # glibc's heap checks and stack protector, a C assert(), glog/absl fatal checks (XLA, TF)
     r"|(?P<glibc>(?:free|malloc|realloc|munmap_chunk|malloc_consolidate)\(\): (?:invalid pointer|invalid size[^\n]*"
     r"|invalid next size[^\n]*|double free[^\n]*|corrupt[^\n]*|memory corruption[^\n]*)"
     r"|double free or corruption(?: \(\w+\))?|corrupted (?:double-linked list|size vs\. prev_size)[^\n]*"
     r"|\*\*\* stack smashing detected \*\*\*)"
     r"|^(?:\S+: )?\S+:\d+: [^\n]+: Assertion `(?P<cassert>[^'\n]+)' failed\.$"
     r"|^F(?:\d{4} [\d:.]+ +\d+| external/\S+|\S*) \S*\] Check failed: (?P<check>[^\n]+)"
     r"|\*\*\* Check failure stack trace: \*\*\*",
     "uncaught {type}|{glibc}|C assertion `{cassert}`|check failed: {check}",
     "Native code aborted. Read the lines just above (what(): ...); get a backtrace with gdb "
     "or a core dump."),
    # torch/utils/data/dataloader.py: a worker that exited by itself (a segfault or abort it
    # printed is above, and wins); the ConnectionResetError or queue.Empty traceback torch
    # prints first ("The above exception was the direct cause ...") is its symptom.
    ("dataloader_exited", "runtime_error",
     r"DataLoader worker \(pids?\(?s?\)? ?[^)]*\) exited unexpectedly(?: with exit code (?P<code>-?\d+))?",
     "DataLoader worker exited unexpectedly|exit code {code}",
     "A DataLoader worker process died without an exception of its own (os._exit, sys.exit or a native "
     "crash in a worker). Rerun with num_workers=0 to see it in the main process; check /dev/shm and host memory."),
    # Python-level causes.
    ("missing_module", "missing_module",
     r"(?:ModuleNotFoundError: )?No module named '?(?P<mod>[\w.]+)'?|ModuleNotFoundError",
     "No module named '{mod}'", HINT_MISSING_MODULE),
    # bitsandbytes' cuda_setup (0.3x-0.41) could not load its CUDA library and says so in its own words.
    ("bnb_cuda_setup", "missing_module",
     r"CUDA Setup failed despite GPU being available|CUDA SETUP: Required library version not found: (?P<lib>\S+)",
     "bitsandbytes: CUDA library not loaded|{lib} not found",
     "bitsandbytes could not load its CUDA library: install the bitsandbytes build for this CUDA (a recent "
     "release), and `python -m bitsandbytes` shows what it looked for (LD_LIBRARY_PATH)."),
    ("import_error", "missing_module",
     r"ImportError: (?P<msg>.+)|cannot open shared object file|undefined symbol: (?P<sym>\S+)"
     # importlib.metadata and pkg_resources: an installed distribution that is not there
     r"|PackageNotFoundError: No package metadata was found for (?P<pkg>\S+)|The '(?P<dist>[^'\n]+)' distribution was not found",
     "{msg}|undefined symbol {sym}|no package {pkg}|no distribution {dist}", HINT_MISSING_MODULE),
    ("file_not_found", "file_not_found",
     r"(?:FileNotFoundError: )?\[Errno 2\] No such file or directory: '(?P<path>[^']*)'|FileNotFoundError"
     r"|[Nn]o such file or directory",  # Go programs (singularity, docker) write it in lower case
     "No such file: {path}", HINT_FILE_MISSING),
    ("hf_not_found", "file_not_found",
     r"does not appear to have a file named (?P<file>[^\s,]+?)\.?(?:\s|$)"
     # a local path that is not there; a Hub id that is not there is an OSError like others
     r"|(?:^|[\s'\"])[/.~][^\s'\"]* is not a local folder and is not a valid model identifier"
     r"|Can't load (?:tokenizer|config|weights) for '(?P<model>[^'\n]*)'"
     r"|Can't load the configuration of '(?P<model2>[^'\n]*)'"
     r"|\bEntryNotFoundError\b|Entry Not Found for url: (?P<url>\S+)"  # huggingface_hub: a 404 on the file
     r"|Can't find a valid checkpoint at (?P<ckpt>\S+)",  # transformers Trainer(resume_from_checkpoint=...)
     "missing {file}|cannot load {model}|cannot load {model2}|not found: {url}|no checkpoint at {ckpt}", HINT_FILE_MISSING),
    ("permission", "permission",
     r"(?:PermissionError: )?\[Errno 13\] Permission denied: '(?P<path>[^']*)'|PermissionError"
     r"|[Pp]ermission denied"
     r"|\[Errno 1\] Operation not permitted|Read-only file system",
     "Permission denied: {path}", HINT_PERMISSION),
    # Native code: Linux delivers SIGFPE ("Floating point exception", bash's name for it) for an
    # integer division by zero (FPE_INTDIV); floating-point operations do not trap by default.
    ("div_zero", "div_zero",
     r"ZeroDivisionError(?:: (?P<msg>.+))?|\b(?:integer |float )?division(?: or modulo)? by zero\b"
     r"|Floating point exception(?! trapping)|(?<!or )\bSIGFPE\b(?!,| or )|exitcode\s*: -8\b|failed \(exitcode: -8\)"
     r"|exits with return code = -8\b|exited on signal 8\b",
     "{msg}", "A division by zero, often an empty batch, dataset split or metric denominator. "
              "Guard the denominator."),
    ("device_mismatch", "device_mismatch",
     r"Expected all tensors to be on the same device(?:, but (?:found at least two devices, "
     r"|got \w+ is on )(?P<a>[\w:]+)(?:,? (?:and|different from other tensors on) (?P<b>[\w:]+))?)?",
     "{a} vs {b}", HINT_DEVICE_MISMATCH),
    ("device_mismatch_other", "device_mismatch",
     r"Expected object of (?:device type|backend) \w+ but got (?:device type|backend) \w+"
     r"|is on CPU, but expected (?:it|them) to be on GPU"
     # ATen's checks name the argument: "Tensor for argument weight is on cpu but expected on mps"
     r"|\bTensor for argument \S+ is on \w+(?::\d+)? but expected on \w+"
     r"|should be either on cpu or on the same device as the indexed tensor"
     r"|to have the same device as tensor for argument"
     r"|Expected a '\w+' device type for generator but found '\w+'"
     r"|can't convert \w+(?::\d+)? device type tensor to numpy"
     # older and module-level wordings: DataParallel, RNN inputs, set_, PyTorch 1.x binary ops
     r"|\b[Ee]xpected device \S+(?: and dtype \w+)? but got device \S+"
     r"|module must have its parameters and buffers on device \S+ \(device_ids\[0\]\) but found one of them on device"
     r"|Input and (?:parameter|hidden) tensors are not at the same device"
     r"|Attempted to set the storage of a tensor on device \S+ to a storage on different device"
     r"|\bis not an? (?:XLA tensor|CUDA tensor|MPS tensor|XPU tensor|HPU tensor)\b"
     r"|Input type \(torch\.cuda\.\w+\) and weight type \(torch\.\w+\)"
     r"|Input type \(torch\.\w+\) and weight type \(torch\.cuda\.\w+\)"
     r"|Input type \(CUDA\w+\) and weight type \(CPU\w+\)|Input type \(CPU\w+\) and weight type \(CUDA\w+\)"
     r"|incompatible devices for jitted computation"
     r"|Tensor on device \S+ is not on the expected device \S+|Placeholder storage has not been allocated on MPS device"
     r"|Cannot copy out of meta tensor",
     "", HINT_DEVICE_MISMATCH),
    ("nan_anomaly", "nan_loss",
     r"Function '(?P<fn>\w+)' returned nan values in its \d+\w* output"
     r"|invalid value \((?:nan|inf)\) encountered in (?P<jit>\S+?)\.?(?:\s|$)"
     r"|Tensor had (?:NaN|Inf|NaN and Inf) values|Detected Infinity or NaN in output"
     r"|found NaN in local (?:grad norm|forward loss)",
     "{fn} returned NaN|NaN/Inf in {jit} (jax_debug_nans)", HINT_NAN_LOSS),
    ("nan_detectron", "nan_loss",
     r"[Ll]oss bec(?:ame|ome) inf(?:inite)? or NaN\b(?: at iteration=(?P<it>\d+))?",
     "loss became NaN/Inf|iteration {it}", HINT_NAN_LOSS),
    ("loss_scale_min", "nan_loss",
     r"Current loss scale already at minimum|Minimum loss scale reached",
     "fp16 loss scale at its minimum (overflow every step)", HINT_NAN_LOSS),
    ("nan_metric_stop", "nan_loss",
     r"Monitored metric (?P<metric>\S+) = \S+ is not finite"
     r"|Invalid loss, terminating training"
     r"|The loss returned in `training_step` is (?:nan|inf|tensor\((?:nan|inf))"
     r"|Detected nan and/or inf values in `(?P<param>[^`\n]+)`"
     # torch.nn.utils.clip_grad_norm_(error_if_nonfinite=True), and a loop's own finiteness check
     # raised as an exception (a "skipped: non-finite loss" note is a recovered step, not this)
     r"|is non-finite, so it cannot be clipped"
     r"|^\s*[\w.]*(?:Error|Exception): [^\n]*?(?:\b[Nn]on-finite (?:loss|gradients?|grad(?:ient)? norm)\b"
     r"|\b(?:[Ll]oss|[Gg]radient norm|[Gg]rad[ _]norm)(?: value)? is (?:not finite|non-finite|nan|inf)\b)",
     "{metric} is not finite|NaN/Inf in {param}", HINT_NAN_LOSS),
    # A printed loss value: counts only when it is the last loss the log reports.
    ("nan_loss_report", "nan_loss",
     r"(?i)\b(?P<key>(?:(?:val|valid|validation|eval|test|dev) )?\w*(?:loss|grad_norm|gnorm))\b['\"]?\s*[=:]?\s*['\"]?(?:tensor\()?"
     r"(?P<val>[-+]?(?:nan|inf(?:inite|inity)?))\b"
     r"|\b(?:nan|inf(?:inite|inity)?)\b[ \w]{0,20}?\bloss\b"
     r"|\bloss (?:is|became|went to) (?:nan|inf(?:inite|inity)?)\b",
     "{key} = {val}", HINT_NAN_LOSS),
    # A CPU-only PyTorch asked for CUDA (torch/cuda/__init__.py _lazy_init raises it as an assert).
    ("torch_cpu_build", "assertion", r"AssertionError: Torch not compiled with CUDA enabled",
     "this PyTorch is a CPU-only build",
     "The job's PyTorch is a CPU-only build: install the CUDA build in the job's environment (pytorch.org's "
     "install selector names the index URL) or run on the CPU."),
    # Messages a program prints instead of a traceback, then exits (argparse exits 2). Hydra's
    # run_and_report prints the exception's message and the HYDRA_FULL_ERROR line.
    ("argparse_usage", "traceback",
     r"^(?P<prog>[\w.\-]+): error: (?P<msg>(?:argument [^\n:]+: |unrecognized arguments: "
     r"|the following arguments are required: |one of the arguments |ambiguous option: )[^\n]*)",
     "command-line error: {msg}",
     "The script rejected its command-line arguments (argparse exits 2): fix the flags in the job script; "
     "`{prog} --help` lists them."),
    ("hydra_missing_config", "file_not_found",
     r"Primary config directory not found|Cannot find primary config '(?P<cfg>[^'\n]*)'",
     "Hydra config not found|{cfg}",
     "Hydra could not find its config: check --config-path/--config-name (relative paths are resolved "
     "from the script's folder, not the working directory) and that the folder is on this node."),
    ("hydra_config_error", "traceback",
     r"Could not override '(?P<key>[^'\n]+)'|Error merging override (?P<ov>\S+)"
     r"|^Set the environment variable HYDRA_FULL_ERROR=1 for a complete stack trace",
     "Hydra config error|cannot override {key}|override {ov}",
     "Hydra rejected the configuration before the run started: fix the override or the config key (a key "
     "the config lacks is added with +key=value); HYDRA_FULL_ERROR=1 shows the stack trace."),
    # Generic Python exceptions: the first one in the decisive region is the root cause.
    ("assertion", "assertion", r"^\s*(?:\w+\.)*AssertionError\b(?::\s?(?P<msg>.*))?",
     "AssertionError: {msg}",
     "An assert failed: a shape, config or data invariant did not hold. Read its message and frame."),
    ("runtime_error", "runtime_error", r"^\s*(?:\w+\.)*(?:Xla|Jax|Torch)?RuntimeError\b(?::\s?(?P<msg>.*))?"
     r"|^\s*torch\._dynamo\.exc\.(?P<dyn>\w+): ?(?P<dmsg>.*)",  # TorchDynamoException is a RuntimeError
     "RuntimeError: {msg}|{dyn}: {dmsg}",
     "Read the RuntimeError message and the last frame of your own code in the traceback."),
    ("py_exception", "traceback",
     r"^\s*(?P<exc>(?:[A-Za-z_]\w*\.)*(?:[A-Z]\w*Error|(?:[A-Z]\w*)?Exception))(?::\s?(?P<msg>.*))?$",
     "{exc}: {msg}",
     "A Python exception ended the run. Read the message and the last frame of your own code."),
    ("py_traceback", "traceback", r"Traceback \(most recent call last\):",
     "Python traceback (no exception line)",
     "A Python exception ended the run; the log lacks its last line."),
)

GENERIC_CLASSES = frozenset(("assertion", "runtime_error", "traceback"))
#: The exception rules that any exception line matches: the first in the region is the root
#: cause. Other rules of those classes name one message (argparse, Hydra, a DataLoader worker's
#: death) and are specific: they win in table order, like the rest.
POSITIONAL_RULES = frozenset(("assertion", "runtime_error", "py_exception"))
#: Rules that only say "SIGKILL": a measured oom_kill_delta of 0 overrides them.
WEAK_KILL_RULES = frozenset(("shell_killed", "sigkill_seen", "dataloader_killed"))
#: Rules that report a consequence (a collective timed out or was aborted because another rank
#: failed): an earlier root-cause traceback in the same episode beats them.
CONSEQUENCE_RULES = frozenset(("nccl_watchdog", "nccl_aborted", "gloo_peer_lost", "mpi_transport",
                               "horovod_shutdown"))
#: Scheduler end-of-job lines: what the program prints after one (its SIGTERM handler saving
#: a checkpoint, a launcher's traceback) is teardown, however long the look-back it needs.
SCHEDULER_END_RULES = frozenset(("slurm_time_limit", "pbs_walltime", "lsf_runlimit", "sge_wallclock", "k8s_deadline",
                                 "slurm_preempted", "slurm_node_failure",
                                 "lsf_preempted", "pbs_preempted", "cloud_preempted", "job_timed_out", "requeued", "timeout_cmd",
                                 "slurm_oom_kill", "sched_mem_limit", "container_oom_kill", "slurm_cancelled",
                                 "lsf_owner_kill"))
#: On a run that exited 0 these stopped a side command (`timeout -v 5 nvidia-smi || true`):
#: timeout(1) exits 124 when it stops the command it runs, so a clean exit is not its doing.
SIDE_STOP_RULES = frozenset(("timeout_cmd",))
#: Classes an exit-0 run can still have: it was ended early (and exited cleanly) or trained to NaN.
CLEAN_EXIT_CLASSES = frozenset(("walltime", "preempted", "interrupted"))
#: Rules searched only when the run exited 0 (a handler that caught the stop signal).
CLEAN_EXIT_RULES = frozenset(("graceful_signal",))
#: Infrastructure faults (the GPU, its memory, the interconnect, the disk, the host's memory):
#: the first one is the cause of the aftermath that follows it (AFTERMATH_RULES). A peer's
#: disappearance (ncclRemoteError, gloo's reset by peer) is not one: it follows a rank's death.
FAULT_RULES = frozenset(("nccl_transport", "xid_hardware", "gpu_off_bus", "ecc_uncorrectable", "nvlink_uncorrectable",
                         "cuda_error", "cuda_lib_error", "cuda_device_assert", "cuda_oom", "cuda_error_oom",
                         "kernel_oom_kill", "slurm_oom_kill", "sched_mem_limit", "no_space_left",
                         "disk_quota", "short_write", "checkpoint_write"))
#: What follows a cause rather than being one: an abort, a cancel, a kill, a peer's abort, a
#: stop signal's own report (its KeyboardInterrupt traceback). An infrastructure fault shortly
#: before one is the cause; timeout(1)'s exit 124 names who sent the stop signal.
AFTERMATH_RULES = frozenset(("slurm_cancelled", "native_abort", "shell_killed", "sigkill_seen", "nccl_aborted",
                             "nccl_watchdog", "keyboard_interrupt", "graceful_signal", "launcher_signal"))
#: Rules that also read lines logged at WARN level (NCCL prints its transport faults as "NCCL WARN").
_WARNED_RULES = SCHEDULER_END_RULES | CLEAN_EXIT_RULES | frozenset(("nccl_transport",))


SCHEDULER_LOOKBACK_LINES = 100
#: Exit codes of a command that could not be started (shells, env, coreutils timeout).
EXEC_EXIT_CODES = (126, 127)
#: coreutils timeout(1)'s status when the command timed out (without --preserve-status).
TIMEOUT_EXIT_CODE = 124
_EXEC_LOOKALIKE = frozenset(("file_not_found", "permission"))
#: Rules whose lines need the "last loss reported" check.
LOSS_REPORT_RULES = frozenset(("nan_loss_report",))
#: A training loop's stop message about a non-finite loss: the first NaN report before it is
#: where the run diverged (its evidence line).
NAN_STOP_RULES = frozenset(("nan_metric_stop", "nan_detectron"))
NAN_GRAD_REPORTS = 3  # non-finite gradient norms a run ends on that are divergence, whatever the loss

Rule = collections.namedtuple("Rule", "rule_id cls regex detail hint")
#: Template names derived from a pattern's groups by suffix (see _derive): byte counts become
#: sizes (64.0 GiB), milliseconds/seconds/minutes become durations (10 min, 2h00m30s), and a
#: memory figure of at least LARGE_MEM_BYTES is also available as <name>_large.
_DERIVED_SUFFIXES = (("_bytes", "_size"), ("_ms", "_dur"), ("_min", "_dur"), ("_s", "_dur"),
                     ("_mem", "_large"))
LARGE_MEM_BYTES = 1 << 30


def compile_rules(rows, trigger_words=None):
    """Compile and check the rule table; raise ValueError on a bad row (at import).

    Besides ids, classes and templates, every way a pattern can match must contain one of the
    trigger words (TRIGGER_WORDS by default): lines without one are never searched, so a
    pattern that could match without one is a rule that silently cannot fire."""
    words = TRIGGER_WORDS if trigger_words is None else trigger_words
    seen, out = set(), []
    for row in rows:
        if len(row) != 5:
            raise ValueError("rule row needs 5 fields: %r" % (row,))
        rule_id, cls, pattern, detail, hint = row
        if rule_id in seen or not re.match(r"^[a-z][a-z0-9_]*$", rule_id):
            raise ValueError("duplicate or malformed rule id %r" % rule_id)
        if cls not in CLASS_IDS or cls == "unknown" or not hint:
            raise ValueError("rule %s: bad class %r or empty hint" % (rule_id, cls))
        regex = re.compile(pattern, re.M)
        if regex.search(""):
            raise ValueError("rule %s matches the empty string (catch-all)" % rule_id)
        names = set(regex.groupindex) | set(_derived_names(regex.groupindex))
        for name in re.findall(r"\{(\w+)\}", detail + hint):
            if name not in names:
                raise ValueError("rule %s: detail or hint uses unknown group %r" % (rule_id, name))
        used = _UsedWords(words)
        missing = _untriggered_branch(pattern, used)
        if missing is not None:
            raise ValueError("rule %s can never fire: %r can match without any trigger word" % (rule_id, missing))
        if words is TRIGGER_WORDS:
            _RULE_WORDS[regex] = _rarer_words(pattern, used.found)
        seen.add(rule_id)
        out.append(Rule(rule_id, cls, regex, detail, hint))
    return tuple(out)


#: Per compiled rule pattern, trigger words of which every match contains one (recorded by
#: compile_rules): a text that contains none of them is not searched with that pattern.
_RULE_WORDS = {}


#: Trigger words found on ordinary output lines ("inf" in every INFO line): a rule whose
#: pattern is triggered without them is skipped on more texts.
_COMMON_TRIGGER_WORDS = ("inf",)


def _rarer_words(pattern, found):
    """The trigger words recorded for pattern: without the common ones when the pattern is
    triggered without them too ("MOAB_INFO: job exceeded wallclock limit" by "wallclock")."""
    if not any(w in found for w in _COMMON_TRIGGER_WORDS):
        return frozenset(found)
    used = _UsedWords([w for w in TRIGGER_WORDS if w not in _COMMON_TRIGGER_WORDS])
    if _untriggered_branch(pattern, used) is None:
        return frozenset(used.found)
    return frozenset(found)


class _UsedWords(object):
    """The trigger words, recording each word that the trigger check found in a literal run of
    a pattern. The check accepts a pattern only when every match contains such a run, so
    every match contains one of the recorded words."""

    def __init__(self, words):
        self.words, self.found = words, set()

    def has(self, run):
        for word in self.words:
            if word in run:
                self.found.add(word)
                return True
        return False


def _sre_modules():
    # re's own parser (sre_parse before 3.11, re._parser since; the old names warn from 3.11 on)
    import importlib
    try:
        return importlib.import_module("re._parser"), importlib.import_module("re._constants")
    except ImportError:
        return importlib.import_module("sre_parse"), importlib.import_module("sre_constants")


def _untriggered_branch(pattern, words):
    """None when every match of pattern contains one of words (case-insensitive, in one literal
    run of the pattern); else the text of the first top-level alternative that may not."""
    parser, consts = _sre_modules()
    tree = parser.parse(pattern, re.M)
    items = list(tree)
    branches = [items]
    if len(items) == 1 and items[0][0] == consts.BRANCH:
        branches = items[0][1][1]
    for branch in branches:
        if not _seq_triggered(list(branch), words, consts):
            return "".join(chr(av) if op == consts.LITERAL else "." for op, av in list(branch))[:60]
    return None


def _seq_triggered(items, words, consts, prefix=""):
    # prefix: the literal text that precedes items in every match (a run continues into a branch)
    run = [prefix]
    for op, av in _flatten(items, consts):
        ch = _literal_char(op, av, consts)
        if ch is not None:
            run.append(ch)
            continue
        if op == consts.AT:
            continue  # ^, $, \b consume nothing
        if _run_has("".join(run), words) or _item_triggered(op, av, words, consts, "".join(run)):
            return True
        run = []
    return _run_has("".join(run), words)


def _flatten(items, consts):
    # Groups without alternation are read inline, so a literal run can cross their edges.
    for op, av in items:
        if op == consts.SUBPATTERN and not any(o == consts.BRANCH for o, _ in list(av[-1])):
            for sub in _flatten(list(av[-1]), consts):
                yield sub
        else:
            yield op, av


def _literal_char(op, av, consts):
    if op == consts.LITERAL:
        return chr(av).lower()
    if op == consts.IN:  # [Ss]: one letter in either case
        chars = set(chr(a).lower() for o, a in av if o == consts.LITERAL)
        if len(chars) == 1 and all(o == consts.LITERAL for o, _ in av):
            return chars.pop()
    return None


def _item_triggered(op, av, words, consts, prefix):
    if op == consts.BRANCH:
        return all(_seq_triggered(list(b), words, consts, prefix) for b in av[1])
    if op == consts.SUBPATTERN:
        return _seq_triggered(list(av[-1]), words, consts, prefix)
    if op in (consts.MAX_REPEAT, consts.MIN_REPEAT) or getattr(consts, "POSSESSIVE_REPEAT", None) == op:
        return av[0] >= 1 and _seq_triggered(list(av[2]), words, consts)
    return False


def _run_has(run, words):
    if isinstance(words, _UsedWords):
        return words.has(run)
    return any(w in run for w in words)


def _derived_names(groups):
    """Names a detail or hint template may use besides the pattern's groups (see _derive)."""
    for name in groups:
        for suffix, extra in _DERIVED_SUFFIXES:
            if name.endswith(suffix):
                yield name[:-len(suffix)] + extra

_COMPILED_RULES = []
_COMPILING = threading.Lock()


def compiled_rules():
    """The rule table, compiled on first use: a run's start-up, before the child exists, must
    not pay ~10 ms of regex compiling. tests/test_classify.py compiles it, so a bad row still
    fails the suite at once."""
    with _COMPILING:  # warm_up() may be compiling it in its thread: once, never twice
        if not _COMPILED_RULES:
            _COMPILED_RULES.extend(compile_rules(FAILURE_RULES))
    return _COMPILED_RULES

#: Lower-case words of which every match of every rule pattern contains one. Only lines that
#: contain one are searched by the (slower) rule patterns, and other parts of gpualert may use
#: them to pick candidate lines; compile_rules rejects a pattern that could match without one.
TRIGGER_WORDS = (
    "error", "exception", "traceback", "kill", "oom", "memory", "alloc", "cancelled", "pbs:", "term_",
    "sig", "exitcode", "xid", "gpu", "ecc", "nvlink", "interrupt", "not found", "denied", "no such",
    "cannot execute", "interpreter", "execve", "cuda", "cublas", "cudnn", "batch size", "exhausted",
    "nccl", "collective", "socket", "gloo", "assert", "nvidia", "torch_", "fault", "abort",
    "illegal instruction", "terminate", "module", "import", "shared object", "undefined symbol",
    "space", "errno", "enospc", "quota", "edquot", "streamwriter", "unexpected pos", "write failed",
    "file named", "model identifier", "permi", "read-only", "division", "device", "backend",
    "input type", "on cpu", "indexed tensor", "nan", "inf", "loss scale", "finite", "executable",
    "unable to launch", "can't load", "invalid loss", "dst tensor", "preempt", "node shutdown",
    "interruption", "spot", "requeue", "timed out", "timed-out", "sending signal", "return code = -",
    "cufft", "cusolver", "cusparse", "curand", "find an engine", "meta tensor", "wallclock", "disk space",
    "gemm", "nvml", "deadline", "unknown command", "walltime", "disk is full", "h_rt", "xla tensor",
    "mps tensor", "xpu tensor", "hpu tensor", "btl_tcp", "ctrl-c", "check fail", "corrupt", "invalid pointer",
    "invalid size", "invalid next size", "double free", "stack smashing", "rminitadapter",
    "primary config", "could not override", "valid checkpoint", "_dynamo.exc.", "tensor for argument",
    "exited unexpectedly", "net/ib", "net/socket", "wrote only", "ibv_",
)


_HINT_BY_ID = dict((row[0], row[4]) for row in FAILURE_RULES)


# ==== Pure core: classification ====

#: The one grammar of the rank prefixes launchers put on a line, read by the classifier, the
#: metrics parser and the renderers: torchrun's --tee/-l and `--redirects` ([3]:, [rank3]:,
#: [default3]:, [RANK3]:), Open MPI's --tag-output ([1,3]<stderr>: jobid,rank) and SageMaker's
#: ([1,mpirank:3,algo-1]<stdout>:), srun --label ("3: ", padded with spaces). A bracketed
#: <stdout>/<stderr> tag without a rank in that place is a prefix with no rank.
_RANK_PREFIX = (r"\[(?:rank|default|RANK)?(\d+)\]:"
                r"|\[\d+,(?:mpirank:)?(\d+)(?:,[^\]\n]{0,70})?\]<std(?:out|err)>:"
                r"|\[[^\]\n]{1,80}\]<std(?:out|err)>:|\s*(\d+): ")
#: pdsh's "host: " (DeepSpeed's multi-node launcher, `pdsh -w`): a host name has a digit or a
#: hyphen ("gpu-node-1", "worker-0", "a085"); a tool's "tar: " or "bash: " has neither, and an
#: exception's name ("Py4JJavaError: ") is not a host.
_HOST_PREFIX = r"[A-Za-z][\w.]*[\d-][\w.-]*(?<!Error)(?<!Exception)(?<!Warning): "
_HOST_PREFIX_RE = re.compile(_HOST_PREFIX)
_RANK_PREFIX_RE = re.compile("(?:%s)?(?:%s)" % (_HOST_PREFIX, _RANK_PREFIX))


def rank_prefix(line, pos=0):
    """(rank or None, where the prefix ends) of a rank prefix at line[pos:], a pdsh host before
    it included; (None, pos) when there is none. A prefix without a rank number
    ([host]<stdout>:) gives (None, its end)."""
    m = _RANK_PREFIX_RE.match(line, pos)
    if m is None:
        return None, pos
    number = m.group(1) or m.group(2) or m.group(3)
    return (int(number) if number is not None else None), m.end()


def strip_rank_prefix(line):
    """The line without its leading rank prefix, or pdsh's host (what the program printed)."""
    end = rank_prefix(line)[1]
    if not end:
        m = _HOST_PREFIX_RE.match(line)
        end = m.end() if m else 0
    return line[end:]


_ANSI_RE = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[@-Z\\-_]")
_ERASE_RE = re.compile(r"^(?:\x1b\[[0-9;]*[A-HJf])*\x1b\[[02]?K")
#: Line prefixes that launchers and log collectors add: rank tags ([rank3]:, [default3]:, 3: ),
#: MPI/SageMaker tags ([1,0]<stderr>:, [1,mpirank:0,algo-1]<stdout>:), Ray's (pid=...) tags,
#: and leading timestamps (ISO 8601 / RFC 3339 as kubectl --timestamps and docker logs -t
#: write them, Python logging's asctime, [bracketed] ones) with an optional log level, and
#: vLLM's "ERROR 03-10 08:07:20 [core.py:302] " / "INFO 11-18 18:07:28 engine.py:366] " headers,
#: the "  | " margin Python 3.11+ draws around an exception group's tracebacks, and pdsh's host.
#: WARNING/WARN levels are kept: they mark the line as noise.
_PREFIX_RE = re.compile(r"^(?:(?:" + _RANK_PREFIX + r")(?:(?<=\]:) )?"  # "[rank3]: " too
                        r"|\(\w+ pid=\d+(?:, ip=[\d.]+)?\) | {2,}\| "  # Ray's tags; an exception group's margin
                        r"|" + _HOST_PREFIX +
                        r"|\[?(?:\d{4}-\d\d-\d\d[T ]|\d\d/\d\d/\d{4} )\d\d:\d\d:\d\d(?:[.,]\d+)?"
                        r"(?:Z|[+-]\d\d:?\d\d)?\]?(?: -)? +"
                        r"(?:\[?(?:INFO|DEBUG|ERROR|CRITICAL|FATAL|NOTICE)\]?(?::| -)? +)?"
                        r"|(?:INFO|DEBUG|ERROR|CRITICAL) \d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)? \[?[\w./-]+:\d+\] )")


_NOISE_RE = re.compile(r"\bNCCL (?:INFO|WARN|TRACE)\b|^wandb: |\b[A-Z]\w*Warning: "
                       r"|^\s*warnings\.warn\(|^\s*warn\("
                       r"|(?:^|[\]|] |\s-\s|\[|^[\w.]+ )WARN(?:ING)?(?:\]|:|\s|$)|^\[?W\d{4} \d|\[W [^\]]*\.(?:cpp|cc|h|hpp):\d+\]"
                       r"|^I\d{4} \d\d:\d\d:\d+\.\d+ +\d+ [\w./-]+:\d+\] "
                       r"|^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+: [IW] [\w./-]+:\d+\] ")


_FRAME_RE = re.compile(r'^\s*File "[^"]*", line \d+|^\s*[~^]+\s*$|^\s*\[Previous line repeated')
_TB_RE = re.compile(r"Traceback \(most recent call last\):")
_CXX_FRAME_RE = re.compile(r"^\s*frame #\d+: ")
_CXX_DUMP_RE = re.compile(r"^\s*(?:what\(\):|terminate called |Exception raised from \S+ at )")
_EXC_NAME_RE = re.compile(r"^(?:\w+\.)*(\w+)")
_WRAPPER_EXC = frozenset(("ChildFailedError", "CalledProcessError"))
_LOSS_VALUE_RE = re.compile(r"(?i)\b\w*loss\b['\"]?\s*[=:]?\s*['\"]?(?:tensor\()?"
                            r"[-+]?(?:\d|nan\b|inf(?:inite|inity)?\b)")


_CARRY_ON_RE = re.compile(r"(?i)\b(?:continuing|retrying|will retry|skipping|falling back|ignoring)\b")
_FINITE_LOSS_RE = re.compile(r"(?i)\b\w*loss\b['\"]?\s*[=:]?\s*['\"]?(?:tensor\()?[-+]?\d")


def clean_line(text, controls=True):
    """Strip ANSI escapes and control bytes; collapse CR redraws to what a terminal shows.
    controls=False skips the search for other control bytes (the caller knows there are none)."""
    if "\r" in text:
        text = _collapse_cr(text)
    if "\x1b" in text:
        text = _ANSI_RE.sub("", text)
    if controls or "\x1b" in text:
        return _CONTROL_RE.sub("", text) if _CONTROL_RE.search(text) else text
    return text


def tail_lines(data, count=TAIL_LINES):
    """The last `count` lines of output (raw bytes or text), cleaned for a reader: no
    control characters, secrets masked, a line longer than TAIL_LINE_MAX_CHARS cut to its start
    and its end around " [...] " (its end is its last state). The one tail helper: the run's
    tail, a watched job's log and the rendered message all go through it."""
    data = data[-256 * 1024:]
    text = data if isinstance(data, str) else bytes(data).decode("utf-8", "replace")
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    # A progress bar redrawn with \r shows its last state, not a terminal's overlay of states.
    redrawn = [([seg for seg in line.split("\r") if seg.strip()] or [""])[-1] for line in lines[-count:]]
    return [_tail_line(clean_line(line)) for line in redrawn]


def _tail_line(text, mark=" [...] "):
    if len(text) <= TAIL_LINE_MAX_CHARS:
        return mask_secrets(text)
    tail = TAIL_LINE_MAX_CHARS // 2  # masked before the cut: a secret cut at it shows nothing
    head = TAIL_LINE_MAX_CHARS - len(mark) - tail
    return _masked_cut(text, 0, head) + mark + _masked_cut(text, len(text) - tail, len(text))


def _collapse_cr(text):
    # Overlay each carriage-return segment onto the previous ones, as a terminal does;
    # an erase-line escape right after the CR clears the line first (rich, tqdm).
    # Only the last segments matter for what remains visible, so long redraw chains are cut.
    segments = text.split("\r")[-200:]
    shown = ""
    for seg in segments:
        if not seg:
            continue
        if _ERASE_RE.match(seg):
            shown = seg
        else:
            plain = len(_ANSI_RE.sub("", seg)) if "\x1b" in seg else len(seg)
            shown = seg + shown[plain:] if plain < len(shown) else seg
    return shown


def _analysis_start(text, raws):
    """First raw line worth preparing: the last PREP_LINES lines, extended back to the last
    traceback when little but NCCL chatter follows it, and over the tracebacks just before."""
    start = max(0, len(raws) - PREP_LINES)
    if start == 0:
        return 0
    headers, line, pos = [], 0, 0
    for m in _TB_RE.finditer(text):
        line += text.count("\n", pos, m.start())
        pos = m.start()
        headers.append(line)
    before = [h for h in headers if h < start]
    if before and _teardown_only(raws, before[-1]):
        start = before[-1]
    for h in reversed(headers):
        if h < start:
            if start - h > EPISODE_GAP_LINES * 20:
                break
            start = h
    return start


def _teardown_only(raws, header):
    """True when the lines after the traceback at raws[header] show no run that went on: a
    launcher's summary and other ranks' NCCL chatter, watchdog aborts and faulthandler
    stacks (64 ranks print thousands of lines) repeat a few shapes (numbers blanked), and
    the traceback's own rank reports no progress."""
    end = rank_prefix(raws[header])[1]
    tag = raws[header][:end] if end else None
    shapes, progress, seen = set(), 0, 0
    for raw in raws[header + 1:]:
        if "NCCL " in raw:
            continue
        seen += 1
        if seen > TEARDOWN_MAX_LINES:
            return False  # hundreds of ranks at most: this much more output is a run that went on
        if (tag is None or raw.startswith(tag)) and ("oss" in raw and _LOSS_VALUE_RE.search(raw)
                                                     or ("ing" in raw or "retry" in raw) and _CARRY_ON_RE.search(raw)):
            progress += 1
            if progress >= TRAIL_PROGRESS_LINES:
                return False
        shapes.add(_TEMPLATE_RE.sub("0", raw))
        if len(shapes) > TRAIL_MAX_LINES:
            return False
    return True


def _prepare(text, raws=None):
    """Split text into (display, body) pairs: cleaned line, and the same without rank prefix."""
    if raws is None:
        raws = text.split("\n")
    if raws and raws[-1] == "":
        raws = raws[:-1]
    ctrl = _CONTROL_RE.search(text) is not None
    out = []
    for raw in raws:
        if ctrl or "\r" in raw or "\x1b" in raw:
            if len(raw) > 16 * MAX_LINE_CHARS:
                raw = raw[-16 * MAX_LINE_CHARS:]  # giant redraw chains: the end is what shows
            raw = clean_line(raw, ctrl)
        if len(raw) > MAX_LINE_CHARS:
            raw = _fit(raw, MAX_LINE_CHARS, " ... ", MAX_LINE_CHARS // 2, MAX_LINE_CHARS // 2)
        body = raw
        if raw[:1] in _PREFIX_START or ": " in raw[:80] and _HOST_PREFIX_RE.match(raw):
            for _ in range(3):
                m = _PREFIX_RE.match(body)
                if not m:
                    break
                body = body[m.end():]
        out.append((raw, body))
    return out


_PREFIX_START = frozenset("[(0123456789 EIDC")


def _maybe_noise(body):
    # Cheap substring tests first: the regex runs on few lines.
    if "NCCL INFO" in body or "NCCL WARN" in body or body.startswith("wandb: "):
        return True
    if "Detected KeyboardInterrupt" in body:
        return False  # Lightning < 2 reports the user's Ctrl-C as a UserWarning
    other = ("Warn" in body or "warn" in body or "WARN" in body or "[W" in body
             or "NCCL TRACE" in body or ": W " in body or ": I " in body)
    if not other and body[:1] == "I" and not body[1:2].isdigit():
        return False  # "INFO ...": of _NOISE_RE's shapes only glog's "I0102 12:00:00.5 ..." is left
    return (other or body[:1] in ("W", "I")) and _NOISE_RE.search(body) is not None


def _mark_kinds(bodies):
    """Per line: 'noise', 'frame' (traceback frames and their source lines), 'cframe' (C++
    backtrace frames), 'native' (the other lines of a C++ exception dump: searched, but not
    counted as output when sizing regions) or 'text'."""
    kinds = []
    prev_frame = False
    for body in bodies:
        if ('File "' in body or "^" in body or "~" in body or "[Previous" in body) and _FRAME_RE.match(body):
            kind = "frame"
        elif "frame #" in body and _CXX_FRAME_RE.match(body):
            kind = "cframe"
        elif ("what()" in body or "terminate called" in body or "Exception raised from" in body) \
                and _CXX_DUMP_RE.match(body):
            kind = "native"
        elif prev_frame and body[:1] in (" ", "\t") and body.strip():
            kind = "frame"  # the source line printed under a frame
        elif _maybe_noise(body):
            kind = "noise"
        else:
            kind = "text"
        prev_frame = kind == "frame" and body.lstrip().startswith("File ")
        kinds.append(kind)
    return kinds


def _find_tracebacks(bodies, kinds):
    """List of [header, exc_line, kind]: kind is 'tb', 'wrapper' or 'ignored'.

    Ignored: unraisable exceptions at shutdown ("Exception ignored in ..."), and tracebacks
    that a WARNING line introduces (logging's exc_info idiom: the message ends with ":"),
    except the last traceback of the log, which a run that failed did not survive.
    """
    found = []
    for i, body in enumerate(bodies):
        if "Traceback (most" not in body or not _TB_RE.search(body):
            continue
        exc = _find_exception_line(bodies, kinds, i)
        kind = "tb"
        before = bodies[i - 1] if i > 0 else ""
        if "Exception ignored in" in before:
            kind = "ignored"
        elif "WARNING" in before and before.rstrip().endswith(":"):
            kind = "warned"
        elif exc is not None:
            m = _EXC_NAME_RE.match(bodies[exc].strip())
            if m and m.group(1) in _WRAPPER_EXC:
                kind = "wrapper"
        found.append([i, exc, kind])
    last = [t for t in found if t[2] in ("tb", "warned")][-1:]
    for t in found:
        if t[2] == "warned":
            t[2] = "tb" if t in last else "ignored"
    return found


def _mark_ignored(bodies, kinds, tbs):
    """Turn ignored tracebacks into noise, and the bare exception line that Python prints
    under "Exception ignored in ..." when it has no traceback to show."""
    for header, exc, kind in tbs:
        if kind == "ignored":
            for j in range(header, (exc if exc is not None else header) + 1):
                kinds[j] = "noise"
    for i, body in enumerate(bodies[:-1]):
        if "Exception ignored in" in body and "Traceback (most" not in bodies[i + 1]:
            kinds[i + 1] = "noise"


def _find_exception_line(bodies, kinds, header):
    """The exception line under a traceback header: the first line that is neither a frame nor
    noise and is indented less than the frames (Python prints frames at 2 and the exception at
    0; torchrun's root-cause block shifts both by 2)."""
    stop = min(len(bodies), header + 400)
    frame_indent = None
    for j in range(header + 1, stop):
        body = bodies[j]
        if kinds[j] in ("frame", "cframe"):
            if frame_indent is None and body.lstrip().startswith("File "):
                frame_indent = len(body) - len(body.lstrip())
            continue
        if not body.strip() or kinds[j] == "noise":
            continue
        if len(body) - len(body.lstrip()) <= max(0, (frame_indent or 2) - 2):
            return j
    return None


def _useful_count(kinds, start, stop):
    return sum(1 for k in kinds[start:stop] if k == "text")


_TEMPLATE_RE = re.compile(r"0x[0-9a-fA-F]+|[0-9a-fA-F]*\d[0-9a-fA-F]*")
#: A progress counter: "450/5000" (not a date or a path) or a progress bar's "45%|".
_COUNTER_RE = re.compile(r"(?<![\w/.:-])\d+/\d+(?![\w/.:-])|\b\d+%\|")


def _ran_on(bodies, kinds, start, stop, *, tags=None, tag=None):
    """True when the lines in [start, stop) show a run that went on, not a teardown.
    Teardown (other ranks' watchdogs, atexit hooks, uploaders, per-rank shutdown notes)
    repeats a few line shapes many times, so useful lines count once per shape (numbers
    and ids blanked): more than TRAIL_MAX_LINES shapes, or more than 4 * TRAIL_MAX_LINES
    lines in all, or TRAIL_PROGRESS_LINES different progress counters of the traceback's
    rank (a progress bar or "step 450/5000" advancing) is a run that went on."""
    shapes, counters, total = set(), set(), 0
    for i in range(start, stop):
        if kinds[i] != "text":
            continue
        total += 1
        body = bodies[i]
        shapes.add(_TEMPLATE_RE.sub("0", body))
        if len(shapes) > TRAIL_MAX_LINES or total > 4 * TRAIL_MAX_LINES:
            return True
        if (tag is None or tags[i] == tag) and ("/" in body or "%|" in body):
            counters.update(_COUNTER_RE.findall(body))
            if len(counters) >= TRAIL_PROGRESS_LINES:
                return True
    return False


def _went_on(bodies, kinds, start, stop, limit, *, tags=None, tag=None):
    """True when the lines in [start, stop) show the program carried on (handled error).
    With a rank tag (the traceback's rank prefix), only lines of that rank count: other
    ranks go on printing until they reach the next collective."""
    progress = 0
    for i in range(start, stop):
        if kinds[i] != "text" or (tag is not None and tags[i] != tag):
            continue
        body = bodies[i]
        if _LOSS_VALUE_RE.search(body) or _CARRY_ON_RE.search(body):
            progress += 1
            if progress >= limit:
                return True
    return False


def _decisive_start(bodies, kinds, tbs, tags):
    """Index of the first line of the decisive region (see classify_text)."""
    real = [t for t in tbs if t[2] == "tb"]
    floor = 0
    if real:
        last = real[-1]
        end = last[1] if last[1] is not None else last[0]
        n = len(kinds)
        if (not _ran_on(bodies, kinds, end + 1, n, tags=tags, tag=tags[last[0]])
                and not _went_on(bodies, kinds, end + 1, n, TRAIL_PROGRESS_LINES, tags=tags, tag=tags[last[0]])):
            start = last[0]
            for prev in reversed(real[:-1]):
                prev_end = prev[1] if prev[1] is not None else prev[0]
                if (_useful_count(kinds, prev_end + 1, start) > EPISODE_GAP_LINES
                        or _went_on(bodies, kinds, prev_end + 1, start, 1)):
                    break
                start = prev[0]
            return _look_back(bodies, kinds, start)
        floor = end + 1  # the run went on after that traceback: it was handled
    return max(floor, _tail_start(kinds, REGION_TAIL_LINES))


def _rank_tag(display, end):
    """The rank prefix (as printed) among the prefixes that display[:end] holds, or None: the
    prefixes are walked as _prepare stripped them (a timestamp may come first)."""
    rest = display[:end]
    for _ in range(3):  # as many prefixes as _prepare strips
        tag_end = rank_prefix(rest)[1]
        if tag_end:
            return rest[:tag_end].strip()
        m = _PREFIX_RE.match(rest)
        if m is None or not m.end():
            return None
        rest = rest[m.end():]
    return None


def _look_back(bodies, kinds, start):
    """Include the lines printed just before a traceback by the same failure (CUDA kernel
    asserts, NCCL watchdog errors, dmesg excerpts), up to the last sign of progress."""
    seen, i = 0, start
    while i > 0 and seen < LOOKBACK_LINES:
        j = i - 1
        if kinds[j] == "text":
            body = bodies[j]
            if _LOSS_VALUE_RE.search(body) or _CARRY_ON_RE.search(body) or _TB_RE.search(body):
                break
            seen += 1
        elif kinds[j] == "frame":
            break  # the end of an earlier traceback
        i = j
    return i


def _tail_start(kinds, want):
    seen = 0
    for i in range(len(kinds) - 1, -1, -1):
        if kinds[i] == "text":
            seen += 1
            if seen >= want:
                return i
    return 0


_SEARCHED = frozenset(("text", "native"))


def _region_parts(bodies, kinds, start, *, searched=_SEARCHED, warned=False, found=None):
    """Region lines to search: noise, frames and lines without a trigger word left empty.
    The trigger words are found in one pass over the lower-cased region, not line by line.
    warned: also the noise lines that a WARN/WARNING level made noise. found: a set that
    receives the trigger words the region contains."""
    import bisect
    parts = [b if kinds[i] in searched or (warned and kinds[i] == "noise" and "WARN" in b) else ""
             for i, b in enumerate(bodies[start:], start)]
    low = "\n".join(parts).lower()
    starts, offset = [], 0
    for part in parts:
        starts.append(offset)
        offset += len(part) + 1
    keep = set()
    for word in TRIGGER_WORDS:  # str.find per word: several times faster than one alternation
        pos = low.find(word)
        if pos >= 0 and found is not None:
            found.add(word)
        while pos >= 0:
            line = bisect.bisect_right(starts, pos) - 1
            keep.add(line)
            pos = low.find(word, starts[line + 1]) if line + 1 < len(starts) else -1
    return [p if i in keep else "" for i, p in enumerate(parts)]


def _derive(groups):
    """The matched groups plus the names _DERIVED_SUFFIXES promises, in human units."""
    out = dict(groups)
    for name, value in groups.items():
        for suffix, extra in _DERIVED_SUFFIXES:
            if name.endswith(suffix):
                derived = _derived_value(suffix, value)
                if derived:
                    out[name[:-len(suffix)] + extra] = derived
                break
    return out


def _derived_value(suffix, value):
    try:
        if suffix == "_bytes":
            return _format_size(int(value))
        if suffix in ("_ms", "_s", "_min"):
            return human_duration(float(value) * {"_ms": 0.001, "_s": 1, "_min": 60}[suffix])
        if suffix == "_mem":
            return value if parse_size(value.replace(" ", "")) >= LARGE_MEM_BYTES else None
    except (ValueError, ConfigError):
        return None
    return None


def human_duration(seconds):
    """45 s, 10 min, 12m30s, 2h00m30s, 1d00h01m, 1d00h00m15s: exact, to compare a limit and a run."""
    s = int(round(max(0.0, seconds)))
    if s < 60:
        return "%d s" % s
    if s < 3600:
        return "%d min" % (s // 60) if s % 60 == 0 else "%dm%02ds" % (s // 60, s % 60)
    if s < 86400:
        return "%dh%02dm%02ds" % (s // 3600, s % 3600 // 60, s % 60)
    days = "%dd%02dh%02dm" % (s // 86400, s % 86400 // 3600, s % 3600 // 60)
    return days + ("%02ds" % (s % 60) if s % 60 else "")


def _render_template(template, groups, sep):
    """Parts separated by "|"; a part naming a group that did not match is dropped."""
    shown = []
    for part in template.split("|"):
        names = re.findall(r"\{(\w+)\}", part)
        if part and all(n in groups for n in names):
            shown.append(part.format(**groups) if names else part)
    return sep.join(shown)


def _evidence(display, body, m_start_in_line):
    offset = max(0, len(display) - len(body))  # the rank prefix length
    pos = offset + max(0, m_start_in_line)
    if len(display) <= EVIDENCE_CHARS:
        return display
    lo = max(0, min(pos - 80, len(display) - EVIDENCE_CHARS))
    return _masked_cut(display, lo, lo + EVIDENCE_CHARS)


#: One failed run's prepared log as the classifier's second opinions read it: the lines and
#: their kinds, the tracebacks, rank tags, the first line's number, the wrapper lines hidden
#: from generic rules, and the rules in force.
#: low: the bodies of all lines, joined and lower-cased (for trigger-word tests).
_LogView = collections.namedtuple("_LogView", "lines kinds tbs tags first_line hide rules low")


class _Region(object):
    """The decisive part of the log, as joined text for fast multi-line regex search.
    generic_text hides the launcher's wrapper exceptions (ChildFailedError...) with spaces
    of the same length, so offsets (and line numbers) stay valid in both texts."""

    def __init__(self, lines, kinds, start, first_line, hide=()):
        import bisect
        self._bisect = bisect.bisect_right
        self.lines, self.kinds, self.start, self.first_line = lines, kinds, start, first_line
        self.words = set()  # the trigger words in text (and so in generic_text)
        parts = _region_parts([b for _, b in lines], kinds, start, found=self.words)
        self.text = "\n".join(parts)
        self.offsets, pos = [], 0
        for p in parts:
            self.offsets.append(pos)
            pos += len(p) + 1
        for i in hide:
            if i >= start:
                parts[i - start] = " " * len(parts[i - start])
        self.generic_text = "\n".join(parts) if hide else self.text
        self._end_text = None

    @property
    def end_text(self):
        """The text for end-of-job rules: also the lines a WARNING level made noise (a scheduler's
        or a requeue handler's line logged at WARNING is still the job's end). Built on first
        use, and only when there are such lines; its offsets are its own."""
        if self._end_text is None:
            if not any(k == "noise" and "WARN" in b
                       for k, (_, b) in zip(self.kinds[self.start:], self.lines[self.start:])):
                self._end_text, self._end_offsets, self.end_words = self.text, self.offsets, self.words
                return self._end_text
            self.end_words = set()
            parts = _region_parts([b for _, b in self.lines], self.kinds, self.start, warned=True,
                                  found=self.end_words)
            self._end_offsets, pos = [], 0
            for p in parts:
                self._end_offsets.append(pos)
                pos += len(p) + 1
            self._end_text = "\n".join(parts)
        return self._end_text

    def locate(self, pos, text=None):
        offsets = self._end_offsets if text is not None and text is self._end_text else self.offsets
        return self._bisect(offsets, pos) - 1 + self.start

    def result(self, rule, m, text):
        """The Classification for match m of rule in text; the evidence line is the line of the
        match's first visible character (a pattern may begin by skipping blank lines)."""
        pos = m.start()
        while pos < m.end() and text[pos] in " \t\n":
            pos += 1
        idx = self.locate(pos, text)
        offsets = self._end_offsets if text is self._end_text else self.offsets
        display, body = self.lines[idx]
        col = pos - offsets[idx - self.start]
        groups = _derive(dict((k, v) for k, v in m.groupdict().items() if v))
        detail = _masked_cut(re.sub(r"\s+", " ", _render_template(rule.detail, groups, ", ") or m.group(0)).strip(),
                             0, 200)
        return Classification(rule.cls, rule.rule_id, detail, self.first_line + idx, _evidence(display, body, col),
                              _render_template(rule.hint, groups, " ") or rule.hint)


_FINITE_GRAD_RE = re.compile(r"(?i)\b(?:grad_norm|gnorm)\b['\"]?\s*[=:]?\s*['\"]?(?:tensor\()?[-+]?\d")
_EVAL_KEY_RE = re.compile(r"(?i)^(?:val|valid|validation|eval|test|dev)")


def _loss_family(key):
    key = (key or "").lower()
    if key.endswith("grad_norm") or key == "gnorm":
        return "grad"
    return "eval" if _EVAL_KEY_RE.match(key) else "loss"


def _finite_report(family):
    """(regex, a substring every match holds) of a finite value of the family."""
    return (_FINITE_GRAD_RE, "norm") if family == "grad" else (_FINITE_LOSS_RE, "oss")


def _last_loss_is_bad(region, idx, family="loss"):
    """True when no finite value of the family (losses, or gradient norms) is reported after
    line idx: the NaN is the final state."""
    finite, needle = _finite_report(family)
    for display, body in region.lines[idx + 1:]:
        if needle in body and finite.search(body):
            return False
    return True


def _match_loss_report(region, rule):
    """The last NaN/Inf report of each family (training loss, gradient norm, evaluation loss)
    that is final. An evaluation loss alone does not count while the training loss is finite
    (an empty or missing validation set prints NaN)."""
    found = {}  # family -> [(line index, match)] in order
    for m in rule.regex.finditer(region.text):
        family = _loss_family(m.groupdict().get("key"))
        found.setdefault(family, []).append((region.locate(m.start(), region.text), m))
    for family in ("loss", "grad", "eval"):
        if family not in found:
            continue
        if family == "eval" and _finite_loss_from(region, region.start):
            continue
        idx = found[family][-1][0]  # the line of the family's last report
        if not _last_loss_is_bad(region, idx, family):
            continue
        streak = _final_streak(region, found[family], idx, family)
        # A skipped fp16 step reports a non-finite gradient norm between finite ones, also on the
        # last step logged; a diverged run keeps reporting them to the end whatever loss it
        # prints (0.0).
        if family == "grad" and len(streak) < NAN_GRAD_REPORTS and _finite_loss_from(region, idx):
            continue
        return region.result(rule, streak[0], region.text)  # the line where the run diverged
    return None


def _final_streak(region, reports, idx, family):
    """The non-finite reports (matches) of the family after its last finite one before line
    idx: the streak the run ends on, first one first."""
    finite, needle = _finite_report(family)
    last_finite = -1
    for j in range(idx - 1, region.start - 1, -1):
        body = region.lines[j][1]
        if needle in body and finite.search(body):
            last_finite = j
            break
    return [m for j, m in reports if j > last_finite]


def _finite_loss_from(region, idx):
    """A finite training loss (not an evaluation one) reported on line idx or after it."""
    for display, body in region.lines[idx:]:
        if "oss" in body and any(not _EVAL_KEY_RE.match(m.group(0)) for m in _FINITE_LOSS_RE.finditer(body)):
            return True
    return False


#: srun's lines for a task that failed, or for ending the step because of it (--kill-on-bad-exit;
#: aertslab/pySCENIC#456, jiabowang/GAPIT#207; "run:" also finds Tianhe's yhrun; Slurm 23's
#: "DUE TO TASK FAILURE", desihub/desispec#2744).
_TASK_FAILED_RE = re.compile(r"run: error: \S+: tasks? [\d,-]+: Exited with exit code [1-9]"
                             r"|run: (?:StepId=\S+ )?tasks? [\d,-]+: exited abnormally"
                             r"|run: (?:launch/slurm: _step_signal: )?Terminating (?:StepId=|job step )"
                             r"|CANCELLED AT \S+ DUE TO TASK FAILURE")
#: What srun and slurmstepd print while they end a step (the bare cancel, the tasks killed), and
#: libstdc++'s words when a process exits with C++ threads still running (its teardown).
_STEP_TEARDOWN_RE = re.compile(r"\*\*\* STEP \S+ (?:ON \S+ )?CANCELLED AT \S+ \*\*\*"
                               r"|run: error: \S+: tasks? [\d,-]+: (?:Killed|Terminated)\b"
                               r"|^terminate called without an active exception$|^Fatal Python error: Aborted$")
STEP_TEARDOWN_LINES = 10  # after a traceback's exception line: the job script stopping its steps


def _mark_step_teardown(bodies, kinds, tbs):
    """A step's cancel and killed tasks after a task failed (srun ends the others), or just after
    the run's own exception (the job script stops a background step), are teardown: noise. The
    failure before them is the cause, not a scancel or the OOM killer."""
    failed = next((i for i, body in enumerate(bodies)
                   if ("run: " in body or "TASK FAILURE" in body) and _TASK_FAILED_RE.search(body)), None)
    excs = [exc for _, exc, kind in tbs if kind == "tb" and exc is not None
            and not bodies[exc].lstrip().startswith(("KeyboardInterrupt", "SystemExit"))]
    for i, body in enumerate(bodies):
        if "***" not in body and "run: error:" not in body and "terminate called" not in body \
                and "Fatal Python" not in body:
            continue
        after_task = failed is not None and i > failed
        after_exc = any(0 < i - exc <= STEP_TEARDOWN_LINES for exc in excs)
        if (after_task or after_exc) and _STEP_TEARDOWN_RE.search(body):
            kinds[i] = "noise"


def _match_rule(region, rule, skip_text=None):
    if rule.rule_id in LOSS_REPORT_RULES:
        if _cannot_match(rule, region.words):
            return None
        return _match_loss_report(region, rule)
    if skip_text is not None:
        text, words = skip_text, region.words  # generic_text: text with some lines blanked
    elif rule.rule_id in _WARNED_RULES:
        text = region.end_text
        words = region.end_words
    else:
        text, words = region.text, region.words
    if _cannot_match(rule, words):
        return None
    m = rule.regex.search(text)
    return region.result(rule, m, text) if m else None


def _cannot_match(rule, words):
    """True when the text holding the trigger words `words` lacks every trigger word of the
    rule (compile_rules records them): the pattern cannot match it, and is not searched.
    Most rules are skipped so on ordinary output (88 searches of a megabyte were 0.1 s)."""
    needed = _RULE_WORDS.get(rule.regex)
    return needed is not None and needed.isdisjoint(words)


def _scan_region(region, rules):
    """Specific rules in table order; generic exception rules by position (root cause first)."""
    generic = []
    for rule in rules:
        if rule.rule_id in POSITIONAL_RULES:
            hit = _match_rule(region, rule, region.generic_text)
            if hit:
                generic.append(hit)
            continue
        if generic and rule.rule_id == "py_traceback":
            break
        hit = _match_rule(region, rule, region.generic_text if rule.cls in GENERIC_CLASSES else None)
        if hit:
            return hit
    return min(generic, key=lambda h: h.line) if generic else None


def _final_nan(region, rules):
    """On a successful run: a NaN/Inf loss that is the last loss the log reports."""
    for rule in (r for r in rules if r.cls == "nan_loss"):
        hit = _match_rule(region, rule)  # loss reports are checked for finality inside
        if hit is None:
            continue
        if rule.rule_id in LOSS_REPORT_RULES or _last_loss_is_bad(region, hit.line - region.first_line):
            return hit
    return None


def _clean_exit_end(region, rules, bodies, kinds):
    """On a run that exited 0: an end-of-job line (preemption, requeue, time limit, a caught
    stop signal) after which the run did not go on: it stopped early and exited cleanly."""
    rules = [r for r in rules if r.cls in CLEAN_EXIT_CLASSES and r.rule_id not in SIDE_STOP_RULES]
    hit = _scan_region(region, rules)
    if hit is not None and hit.rule == "slurm_cancelled" and "*** STEP" in hit.evidence:
        # a step's cancel alone: a background step the job script stopped, unless the program
        # says it caught the signal (scancel --signal=TERM reaches a step, and it exits 0)
        hit = _scan_region(region, [r for r in rules if r.rule_id != "slurm_cancelled"])
    if hit is None:
        return None
    idx = hit.line - region.first_line
    return None if _went_on(bodies, kinds, idx + 1, len(bodies), TRAIL_PROGRESS_LINES) else hit


def _classify_lines(lines, rules, first_line, success, code=None):
    """Log-only classification of prepared lines, or None when nothing is found.
    code: the exit code; 126/127 turn a missing file or a denied permission that no
    Python traceback reports into exec_failure (the shell could not start the command)."""
    bodies = [b for _, b in lines]
    kinds = _mark_kinds(bodies)
    if success:
        region = _Region(lines, kinds, _tail_start(kinds, REGION_TAIL_LINES), first_line)
        return _clean_exit_end(region, rules, bodies, kinds) or _final_nan(region, rules)
    rules = [r for r in rules if r.rule_id not in CLEAN_EXIT_RULES]
    tbs = _find_tracebacks(bodies, kinds)
    _mark_ignored(bodies, kinds, tbs)
    _mark_step_teardown(bodies, kinds, tbs)
    reraised = _mark_reraises(bodies, kinds, tbs)
    tags = [_rank_tag(display, len(display) - len(body)) if len(display) != len(body) else None
            for display, body in lines]  # per line, the rank prefix it carries (as printed), or None
    start = _decisive_start(bodies, kinds, tbs, tags)
    hide = [exc for _, exc, kind in tbs if kind == "wrapper" and exc is not None]
    hide += [header for header, _, kind in tbs if kind == "wrapper"]
    region = _Region(lines, kinds, start, first_line, hide)
    log = _LogView(lines, kinds, tbs, tags, first_line, hide, rules, "\n".join(bodies).lower())
    hit = _scan_region(region, rules)
    while hit is not None and hit.cls == "exec_failure":
        # "conda: command not found" in a job script's preamble, then the program ran: what it
        # printed afterwards is the failure (also the command itself not starting: srun's
        # execve() error), or there is no evidence
        idx = hit.line - first_line
        later = _scan_region(_Region(lines, kinds, idx + 1, first_line, hide), rules)
        if later is None:
            if _ran_after(bodies, kinds, tags, idx):
                hit = _scan_region(region, [r for r in rules if r.cls != "exec_failure"])
            break
        hit = later
    if hit is not None and hit.rule in CONSEQUENCE_RULES:
        hit = _root_cause_above(log, start, hit) or _root_cause_before(log, start) or hit
    ranks = _line_ranks(bodies, tags)
    root_rank = _launcher_root_rank(bodies)
    if hit is None or hit.cls not in _RANK_BLIND:
        hit = _failing_rank_cause(log, ranks, start, root_rank, hit) or hit
    if hit is not None and hit.rule in CONSEQUENCE_RULES and root_rank is not None \
            and ranks[hit.line - first_line] not in (None, root_rank):
        hit = _with_launcher_root(hit, bodies, root_rank)
    if hit is not None and hit.rule in AFTERMATH_RULES:
        hit = _fault_of_aftermath(log, start, hit) or hit
    if hit is None or hit.cls not in _RANK_BLIND:
        # an Xid or ECC error a little before: other ranks' NCCL errors, CUDA errors or
        # interruptions are its consequences
        hit = _scheduler_end_before(log, start, lambda rule: rule.cls == "gpu_hardware") or hit
    if hit is None or hit.cls not in ("walltime", "preempted"):
        hit = _scheduler_end_before(log, start) or hit
    if hit is not None and hit.rule == "py_traceback":
        hit = _cause_before_bare_traceback(log, start) or hit
    if hit is not None and code in EXEC_EXIT_CODES and hit.cls in _EXEC_LOOKALIKE \
            and not any(h <= hit.line - first_line <= (e if e is not None else h) for h, e, _ in tbs):
        hit = _as_exec_failure(hit, code)
    return _name_the_source(_first_nan(log, _first_line_of_message(log, hit)), first_line, ranks, root_rank,
                            reraised)


MESSAGE_LOOKUP_LINES = 1000  # how far up a message's first line (or an error's first repeat) is sought


def _first_nan(log, hit):
    """A NaN verdict from a stop message (Lightning's "is not finite", "Loss is nan, stopping")
    shows the first non-finite loss of the streak the run ended on, where it diverged, when the
    log reports one before the message."""
    if hit is None or hit.rule not in NAN_STOP_RULES or hit.line is None:
        return hit
    idx = hit.line - log.first_line
    region = _Region(log.lines[:idx], log.kinds[:idx], 0, log.first_line)
    for rule in log.rules:
        if rule.rule_id in LOSS_REPORT_RULES:
            first = _match_loss_report(region, rule)
            if first is not None:
                return hit._replace(line=first.line, evidence=first.evidence)
    return hit


def _first_line_of_message(log, hit):
    """The evidence line moved up to the first line of its message: while the line just above
    (same rank prefix; a WARN-level library line counts) also matches a rule of the hit's class,
    it is the start of the same error (NCCL's "... failed: ncclSystemError" before its
    "ncclSystemError: System call ..." gloss; the first of a run of device-side asserts)."""
    if hit is None or hit.line is None or hit.cls in _TERMINAL or hit.cls == "exec_failure":
        return hit  # the shell, the scheduler, the kernel say it once each; each command fails on its own
    idx = hit.line - log.first_line
    same = [r for r in log.rules if r.cls == hit.cls and r.rule_id not in LOSS_REPORT_RULES]
    i = idx
    while i > 0 and idx - i < MESSAGE_LOOKUP_LINES:
        display, body = log.lines[i - 1]
        if log.tags[i - 1] != log.tags[idx] or not body.strip() or log.kinds[i - 1] == "frame" \
                or (log.kinds[i - 1] == "noise" and "WARN" not in body):
            break
        if not any(r.regex.search(body) for r in same):
            break
        i -= 1
    if i == idx:
        return hit
    display, body = log.lines[i]
    return hit._replace(line=log.first_line + i, evidence=_evidence(display, body, 0))


# ---- the source of the failure: which rank, which worker ----

#: torch's ExceptionWrapper re-raise ("KeyError: Caught KeyError in DataLoader worker process 0."
#: followed by "Original Traceback ..."): the original exception is the cause.
_RERAISE_RE = re.compile(r"\bCaught \w+ (in (?:DataLoader worker process \d+|pin memory thread for device \d+"
                         r"|replica \d+ on device \d+))")
#: Launchers' words for the first rank that failed: torchrun's "Root Cause (first observed
#: failure)" block, mpirun's first non-zero process, DeepSpeed's launcher.
_ROOT_BLOCK_RE = re.compile(r"^\s*rank\s*: (\d+) \(local_rank: \d+\)")
_SUMMARY_EDGE_RE = re.compile(r"^\s*(?:-{20,}|={20,}|\[\d+\]:)\s*$")
_LAUNCHER_RANK_RE = re.compile(r"Process name: \[\[\d+,\d+\],(\d+)\]"
                               r"|process rank (\d+) with PID \d+ on node \S+ exited on signal"
                               r"|'--local_rank=(\d+)'[^\n]*\] exits with return code = -?[1-9]")
#: Classes a rank's own traceback does not override: the machine or the scheduler ended the job.
_RANK_BLIND = frozenset(("gpu_hardware", "walltime", "preempted", "oom_killer"))


def _mark_reraises(bodies, kinds, tbs):
    """Re-raises restate the original exception: their exception line becomes noise and the
    traceback a wrapper. Returns {original traceback's header: 'in DataLoader worker process N'}."""
    where = {}
    for n, (_, exc, _) in enumerate(tbs):
        if exc is None or "Caught " not in bodies[exc]:
            continue
        m = _RERAISE_RE.search(bodies[exc])
        if m and n + 1 < len(tbs) and tbs[n + 1][0] <= exc + 1:
            tbs[n][2] = "wrapper"
            kinds[exc] = "noise"
            where[tbs[n + 1][0]] = (tbs[n + 1][1], m.group(1))
    return where


def _line_ranks(bodies, tags):
    """Per line, the rank it belongs to: its prefix's rank, or inside torchrun's failure summary
    the rank of the entry ("rank      : 1 (local_rank: 1)") up to the next entry or rule line."""
    ranks = [rank_prefix(t.strip() + " ")[0] if t else None for t in tags]
    entry = None
    for i, body in enumerate(bodies):
        if entry is not None and _SUMMARY_EDGE_RE.match(body):
            entry = None
        elif "local_rank" in body:
            m = _ROOT_BLOCK_RE.match(body)
            entry = int(m.group(1)) if m else entry
        if entry is not None and ranks[i] is None:
            ranks[i] = entry
    return ranks


def _launcher_root_rank(bodies):
    """The rank a launcher names as the first that failed, or None."""
    for i, body in enumerate(bodies):
        if "Root Cause" in body and "first observed failure" in body:
            for later in bodies[i + 1:i + 8]:
                m = _ROOT_BLOCK_RE.match(later)
                if m:
                    return int(m.group(1))
        if "Process name" in body or "process rank" in body or "--local_rank=" in body:
            m = _LAUNCHER_RANK_RE.search(body)
            if m:
                return int(next(g for g in m.groups() if g is not None))
    return None


def _with_launcher_root(hit, bodies, root_rank):
    """The cause found is another rank's consequence (its peer went away) and the launcher names
    a rank as the first that failed, with nothing of its own found: say so in the detail, with
    the exit code the launcher recorded, so the reader looks at that rank. (Whether it said
    nothing or its lines carry no rank prefix, the log cannot tell.)"""
    for i, body in enumerate(bodies):
        m = _ROOT_BLOCK_RE.match(body)
        if m and int(m.group(1)) == root_rank:
            code = next((" ".join(b.split()) for b in bodies[i + 1:i + 4] if b.strip().startswith("exitcode")), "")
            return hit._replace(detail="%s; the launcher names rank %d as the first failure%s" % (
                hit.detail, root_rank, " (%s)" % code if code else ""))
    return hit


def _failing_rank_cause(log, ranks, start, root_rank, hit=None):
    """When tracebacks of several ranks are in the decisive region, the failing rank's own
    traceback is the cause and the others' are consequences: the rank a launcher names, else
    the rank whose traceback came first. Its lines alone (other ranks' hidden) are scanned:
    from its own traceback, or, when its lines carry no rank (only the launcher's summary
    does) and the hit is on another rank's line, from the region's start."""
    lines, kinds, tbs, first_line = log.lines, log.kinds, log.tbs, log.first_line
    tagged = [t for t in tbs if t[2] == "tb" and ranks[t[0]] is not None]
    in_region = set(ranks[t[0]] for t in tagged if t[0] >= start)
    focus = root_rank
    if focus is None:
        if len(in_region) < 2:
            return None
        focus = ranks[min(t[0] for t in tagged if t[0] >= start)]
    own = [t for t in tagged if ranks[t[0]] == focus]
    mine = [k if ranks[i] in (None, focus) else "noise" for i, k in enumerate(kinds)]
    bodies = [b for _, b in lines]
    if own:
        begin = _look_back(bodies, mine, own[-1][0])
        for prev in reversed(own[:-1]):  # the rank's earlier tracebacks of the same episode
            prev_end = prev[1] if prev[1] is not None else prev[0]
            if _useful_count(mine, prev_end + 1, begin) > EPISODE_GAP_LINES:
                break
            begin = _look_back(bodies, mine, prev[0])
    elif hit is not None and ranks[hit.line - first_line] not in (None, focus):
        begin = start
    else:
        return None
    hit = _scan_region(_Region(lines, mine, begin, first_line, log.hide), log.rules)
    return hit if hit is not None and hit.cls != "nccl" else None


def _name_the_source(hit, first_line, ranks, root_rank, reraised):
    """Prefix the detail with the rank whose line it is (or that the launcher named), and
    name the worker whose exception was re-raised."""
    if hit is None or hit.line is None:
        return hit
    idx = hit.line - first_line
    detail = hit.detail
    for header, (exc, where) in reraised.items():
        if header <= idx <= (exc if exc is not None else header):
            detail = "%s (%s)" % (detail, where)
    rank = ranks[idx] if 0 <= idx < len(ranks) else None
    if rank is None and hit.cls not in _TERMINAL:
        rank = root_rank
    if rank is not None and not detail.startswith("rank "):
        detail = "rank %d: %s" % (rank, detail)
    return hit._replace(detail=detail[:200], rank=rank)


def _scheduler_end_before(log, start, keep=lambda rule: rule.rule_id in SCHEDULER_END_RULES):
    """A scheduler end-of-job line shortly above the decisive region (up to
    SCHEDULER_LOOKBACK_LINES useful lines, with no progress in between): the job was ended
    by the scheduler and the region is its teardown. keep picks the rules searched there
    (also used for a GPU's hardware fault, whose consequences the region may show).
    Useful lines count once per shape (numbers and ids blanked, as in _ran_on): teardown
    repeats a few shapes (per-rank aborts, atexit hooks, uploader retries) for hundreds of
    lines after the scheduler's line, and all of it is still the end of the job."""
    if not _may_match_above(log, keep):
        return None  # the common case: nothing scheduler-like anywhere; skip the walk back
    return _scan_above(log, _walk_back(log, start), start, keep)


def _walk_back(log, start):
    """The first line of the job's end above `start`: back over at most
    SCHEDULER_LOOKBACK_LINES shapes of useful lines, stopping at the run's last progress."""
    kinds, bodies = log.kinds, [b for _, b in log.lines]
    lo, shapes = start, set()
    while lo > 0 and len(shapes) < SCHEDULER_LOOKBACK_LINES:
        j = lo - 1
        if kinds[j] == "text":
            if _LOSS_VALUE_RE.search(bodies[j]) or _CARRY_ON_RE.search(bodies[j]):
                break
            shapes.add(_TEMPLATE_RE.sub("0", bodies[j]))
        lo = j
    return lo


def _may_match_above(log, keep):
    """False when no rule that keep picks can match anywhere in the log: none of its trigger
    words (recorded by compile_rules) is in any line."""
    for rule in log.rules:
        if keep(rule):
            needed = _RULE_WORDS.get(rule.regex)
            if needed is None or any(word in log.low for word in needed):
                return True
    return False


def _fault_of_aftermath(log, start, hit):
    """The hit is an aftermath (an abort, a cancel, a kill, a peer's abort): the first
    infrastructure fault in the log's end is the cause: in the region, or in the lines shortly
    above it with no progress in between (as _scheduler_end_before walks back). One printed
    after the aftermath counts too: an epilogue's dmesg shows the Xid after the step's cancel,
    a shell step's ENOSPC explains the iostream abort before it."""
    idx = hit.line - log.first_line
    keep = [r for r in log.rules if r.rule_id in FAULT_RULES]
    if not _may_match_above(log, lambda rule: rule.rule_id in FAULT_RULES):
        return None
    region = _Region(log.lines, log.kinds, _walk_back(log, min(start, idx)), log.first_line)
    found = [h for h in (_match_rule(region, rule) for rule in keep) if h is not None]
    return min(found, key=lambda h: h.line) if found else None


def _cause_before_bare_traceback(log, start):
    """A traceback without its exception line (the process died while printing it) says
    nothing: a specific cause among the lines shortly above it (a worker's segfault, a kernel
    line), progress or not, is the better evidence."""
    lo, seen = start, 0
    while lo > 0 and seen < SCHEDULER_LOOKBACK_LINES:
        lo -= 1
        seen += log.kinds[lo] == "text"
    return _scan_above(log, lo, start, lambda rule: rule.cls not in GENERIC_CLASSES)


def _scan_above(log, first, start, keep):
    """The first hit of the rules keep picks in the lines [first, start), or None."""
    if first >= start:
        return None
    return _scan_region(_Region(log.lines[:start], log.kinds[:start], first, log.first_line),
                        [r for r in log.rules if keep(r)])


def _ran_after(bodies, kinds, tags, idx):
    """True when the program visibly ran after line idx (progress, or too much output)."""
    n = len(bodies)
    return (_went_on(bodies, kinds, idx + 1, n, TRAIL_PROGRESS_LINES)
            or _ran_on(bodies, kinds, idx + 1, n, tags=tags, tag=tags[idx]))


def _root_cause_above(log, start, hit):
    """The hit was a collective's watchdog/abort (a consequence) inside the region, after a
    traceback of the same episode began: other ranks time out or abort while the failed rank's
    job is torn down. The cause found in the region up to that traceback's exception line (and
    above the hit) wins if it names another class."""
    idx = hit.line - log.first_line
    above = [t for t in log.tbs if t[2] == "tb" and start <= t[0] < idx]
    if not above:
        return None
    end = above[-1][1] if above[-1][1] is not None else above[-1][0]
    stop = min(end + 1, idx)
    root = _scan_region(_Region(log.lines[:stop], log.kinds[:stop], start, log.first_line,
                                [i for i in log.hide if i < stop]), log.rules)
    return root if root is not None and root.cls != "nccl" and root.rule != "py_traceback" else None


def _root_cause_before(log, start):
    """The hit was a collective's watchdog/abort, a consequence. When a traceback before the
    region starts the same episode (no progress between it and the region; a long dump of
    other ranks in between does not count), its root cause wins if it names another class."""
    kinds, tags, bodies = log.kinds, log.tags, [b for _, b in log.lines]
    earlier = [t for t in log.tbs if t[2] == "tb" and t[0] < start]
    if not earlier:
        return None
    prev = earlier[-1]
    end = prev[1] if prev[1] is not None else prev[0]
    if _went_on(bodies, kinds, end + 1, start, TRAIL_PROGRESS_LINES, tags=tags, tag=tags[prev[0]]):
        return None
    root = _scan_region(_Region(log.lines, kinds, _look_back(bodies, kinds, prev[0]), log.first_line, log.hide),
                        log.rules)
    return root if root is not None and root.cls != "nccl" else None


def _as_exec_failure(hit, code):
    return hit._replace(cls="exec_failure", rule="exec_exit_code",
                        detail=("exit code %d, %s" % (code, hit.detail))[:200],
                        remediation="The command could not be started (exit %d): check its name, PATH, the "
                                    "#! line and the execute bit." % code)


# ---- process-boundary facts ----

_SIGNAL_CLASS = {1: "interrupted", 2: "interrupted", 3: "interrupted", 15: "interrupted",
                 4: "native_abort", 6: "native_abort", 7: "native_abort", 8: "div_zero",
                 11: "segfault", 24: "walltime", 25: "disk_full", 9: "oom_killer"}


_TERMINAL = frozenset(("walltime", "preempted", "interrupted", "oom_killer", "gpu_hardware"))
_NATIVE = frozenset(("segfault", "native_abort", "cuda_runtime", "cuda_oom", "nccl", "ram_oom", "disk_full"))
_HINTS = {"segfault": _HINT_BY_ID["segfault"], "native_abort": _HINT_BY_ID["native_abort"],
          "interrupted": HINT_INTERRUPTED, "walltime": HINT_TIME_LIMIT, "disk_full": HINT_DISK_FULL,
          "oom_killer": HINT_OOM_KILLER, "preempted": HINT_PREEMPTED, "gpu_hardware": HINT_GPU_HARDWARE,
          "div_zero": _HINT_BY_ID["div_zero"]}


def signal_of(exit_code):
    """Signal number that ended the child: negative codes, or a shell's 128+N; else None."""
    if not isinstance(exit_code, int) or isinstance(exit_code, bool):
        return None
    if exit_code < 0:
        return -exit_code
    if 128 < exit_code < 160:
        return exit_code - 128
    return None


_SUCCESS = Classification(None, None, "", None, "", "")


def _count(facts, key):
    """An integer fact (a counter delta), 0 when absent or not a number."""
    value = facts.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _fact(cls, rule, detail, evidence="", hint=None):
    return Classification(cls, rule, detail, None, (evidence or "")[:EVIDENCE_CHARS],
                          hint or _HINTS.get(cls, "Read the end of the log."))


_SCHEDULER_FACTS = {"walltime": ("walltime", "scheduler_walltime", "scheduler time limit"),
                    "preempted": ("preempted", "scheduler_preempted", "preempted by the scheduler"),
                    "cancelled": ("interrupted", "scheduler_cancelled", "cancelled via the scheduler")}


def _scheduler_fact(facts):
    row = _SCHEDULER_FACTS.get(facts.get("scheduler_reason"))
    return _fact(*row, evidence=facts.get("scheduler_evidence") or "") if row else None


def _resolve_signal(sig, log, facts):
    """The child died of a signal: keep log evidence only when it can explain that death."""
    name = signal_name(sig)
    if log is not None and log.cls in _TERMINAL:
        return _check_weak_kill(log, facts)
    if log is not None and log.cls == "exec_failure" and sig != 9:
        return log  # nothing ran after it: the signal status is the launcher's (mpirun aborts)
    if log is not None and log.rule in FAULT_RULES and not _count(facts, "oom_kill_delta"):
        return log  # the fault came first; the kill or abort (a launcher's, a scheduler's) followed it
    if sig == 9:
        if _count(facts, "oom_kill_delta") > 0:
            return _fact("oom_killer", "cgroup_oom_kill",
                         "killed by SIGKILL; cgroup oom_kill +%d" % facts["oom_kill_delta"])
        if "oom_kill_delta" in facts:  # measured, and no OOM kill recorded
            return _fact("unknown", "sigkill_no_evidence",
                         "killed by SIGKILL; the cgroup recorded no OOM kill",
                         hint="Something sent SIGKILL (kill -9, the scheduler, a launcher); "
                              "check dmesg and the scheduler.")
        # Not measured: the OOM killer is by far the usual sender of a SIGKILL that the
        # wrapper itself did not receive (a scheduler kill would have reached it too).
        return _fact("oom_killer", "sigkill_assumed_oom",
                     "killed by SIGKILL; OOM killer assumed (no cgroup counter to confirm)")
    if log is not None and (log.cls in _NATIVE and sig in (4, 6, 7, 8, 11) or log.cls == "div_zero" and sig == 8):
        return log
    cls = _SIGNAL_CLASS.get(sig, "unknown")
    return _fact(cls, "signal_" + name.lower().replace(" ", ""), "killed by %s" % name,
                 hint=None if cls != "unknown" else "The process was killed by %s." % name)


def _check_weak_kill(log, facts):
    if log.rule in WEAK_KILL_RULES and facts.get("oom_kill_delta") == 0:
        return Classification("unknown", "sigkill_no_evidence",
                              "killed by SIGKILL; the cgroup recorded no OOM kill",
                              log.line, log.evidence,
                              "Something sent SIGKILL; check the scheduler and dmesg.")
    return log


def _resolve(log, facts):
    """Combine the log finding with the facts (see classify_text for the precedence)."""
    code = facts.get("exit_code")
    if facts.get("timed_out"):
        return _fact("walltime", "wrapper_timeout", "stopped by gpualert --timeout",
                     hint="gpualert's own --timeout stopped the command, not the scheduler. Rerun "
                          "with a longer --timeout (or none) and resume from the last checkpoint.")
    sched = _scheduler_fact(facts)
    if log is not None and log.cls in ("walltime", "preempted", "gpu_hardware"):
        return log
    if sched:
        return sched
    signals = facts.get("received_signals") or []
    if signals and isinstance(signals, (list, tuple)):
        return _fact("interrupted", "received_signal", "gpualert received " + ", ".join(map(str, signals)))
    if code is None or code == 0:
        return log or _SUCCESS  # on success only a final NaN loss is looked for
    sig = signal_of(code)
    if sig is not None and signal_name(sig) in (facts.get("warnings_passed") or ()):
        return _fact("walltime", "died_of_warning",
                     "died of %s, the time-limit warning gpualert passed on" % signal_name(sig),
                     hint=HINT_WARNING_DEATH % {"sig": signal_name(sig), "short": signal_name(sig)[3:]})
    if _count(facts, "ecc_delta") > 0 and (log is None or log.cls != "gpu_hardware"):
        return _fact("gpu_hardware", "ecc_counter", "uncorrected ECC errors +%d" % facts["ecc_delta"])
    weak_log = log is None or log.cls in GENERIC_CLASSES or log.cls == "oom_killer"
    if _count(facts, "oom_kill_delta") > 0 and weak_log:
        return log if log is not None and log.cls == "oom_killer" else _fact(
            "oom_killer", "cgroup_oom_kill", "cgroup oom_kill +%d" % facts["oom_kill_delta"])
    if sig is not None and facts.get("srun_ended_step") and log is not None:
        # srun's 128+N reports the tasks it killed after one failed: that failure is the cause
        return _check_weak_kill(log, facts)
    if sig is not None:
        return _resolve_signal(sig, log, facts)
    if code == TIMEOUT_EXIT_CODE and (log is None or log.rule in AFTERMATH_RULES):
        # timeout(1) sent the stop signal whose report (a KeyboardInterrupt traceback) the log shows
        verdict = _fact("walltime", "timeout_exit_code", "exit code 124: timeout(1) stopped the command at its limit",
                        hint="coreutils timeout exits 124 when the command ran out of time. Give it more time or "
                             "checkpoint before the limit; resume from the last checkpoint.")
        return verdict if log is None else verdict._replace(line=log.line, evidence=log.evidence, rank=log.rank)
    if log is not None:
        return _check_weak_kill(log, facts)
    if code in EXEC_EXIT_CODES:
        what = "found" if code == 127 else "executed"
        return _fact("exec_failure", "exec_exit_code", "exit code %d: the command could not be %s" % (code, what),
                     hint="Check the command name, PATH, the #! line and the execute bit.")
    return _fact("unknown", "exit_code", "exit code %s, no recognised cause in the log" % code,
                 hint="Read the end of the log; the program exited with an error but printed no known cause.")


def _earlier_cause(window, noted):
    """The window lost the evidence (nothing, a bare traceback) or shows only a consequence
    (a collective's watchdog): a cause found earlier in the log (facts["noted_lines"]) wins,
    unless it is only a consequence or a bare traceback itself."""
    if noted is None:
        return window
    if window is not None and window.rule in CONSEQUENCE_RULES:
        weak = noted.rule in CONSEQUENCE_RULES or noted.rule == "py_traceback"
        return window if weak else noted
    return noted


def _noted_limit(window, first_line):
    """Noted lines count up to this line: anywhere when the window found nothing; before the
    consequence it found; before the analysed text after a bare traceback."""
    if window is None:
        return float("inf")
    return window.line if window.rule in CONSEQUENCE_RULES and window.line else first_line


def _noted_finding(facts, rules, first_line, success):
    noted = [pair for pair in (facts.get("noted_lines") or [])  # [(line number, text)]
             if isinstance(pair, (tuple, list)) and len(pair) == 2 and isinstance(pair[0], int)
             and not isinstance(pair[0], bool) and pair[0] < first_line]
    if not noted or success:
        return None
    noted.sort()
    lines = _prepare("\n".join(str(t).replace("\n", " ") for _, t in noted))
    hit = _classify_lines(lines, rules, 1, False)
    if hit is None:
        return None
    return hit._replace(line=noted[hit.line - 1][0])


def classify_text(text, facts=None, rules=None, first_line=None):
    """Classify a finished run from its log text (the tail) and the process facts.

    Precedence: exec_error; the wrapper's --timeout; scheduler end-of-job lines in the log
    and the scheduler's reason; signals gpualert received; then on a failed run the log's
    decisive region (the last traceback and tracebacks just before it; after a handled
    traceback or without one, the last REGION_TAIL_LINES useful lines), checked against
    the exit signal, ECC and cgroup OOM counters. Exit 0 only looks for a final NaN loss;
    exit 126/127 with no cause, or only a missing file outside a traceback, is exec_failure.
    first_line is the absolute number of the text's first line; by default it follows
    from facts["total_lines"] (the text is the log's tail), else 1. Never raises.
    """
    facts = facts if isinstance(facts, dict) else {}
    if rules is None:  # no output, nothing to search: don't compile the table for it
        rules = compiled_rules() if text and not str(text).isspace() else ()
    try:
        if facts.get("exec_error"):
            return _fact("exec_failure", "exec_error", str(facts["exec_error"])[:200],
                         hint="The command could not be started: check its name, PATH and permissions.")
        success = facts.get("exit_code") == 0
        text = text if isinstance(text, str) else _decode(text or b"")
        text = text.replace("\x00", "")
        text, facts = _without_other_jobs(text, facts)
        if not isinstance(first_line, int):
            first_line = _first_line_of_tail(text, facts.get("total_lines"))
        raws = text.split("\n")
        skip = _analysis_start(text, raws)
        if skip and "noted_lines" not in facts:  # a scheduler's verdict in the text's own head
            facts = dict(facts, noted_lines=_marked_lines(raws[:skip], first_line))
        first_line += skip
        code = facts.get("exit_code")
        log = _classify_lines(_prepare(text, raws[skip:]), rules, first_line, success, code)
        if log is None or log.rule == "py_traceback" or log.rule in CONSEQUENCE_RULES:
            log = _earlier_cause(log, _noted_finding(facts, rules, _noted_limit(log, first_line), success))
        if log is not None and isinstance(code, int) and code > 128 and _TASK_FAILED_RE.search(text):
            facts = dict(facts, srun_ended_step=True)
        verdict = _with_memory_limit(_with_run_time(_as_hang(_resolve(log, facts), facts), facts), facts)
        if verdict.rule == "exit_code":  # no known cause: the program's own last error line
            verdict = _with_last_error_line(verdict, raws, first_line - skip)
        return verdict
    except Exception as exc:  # a notifier must still notify: degrade to the facts alone
        return _fallback(facts, exc)


_SCHEDULER_MARKER_RE = re.compile("|".join(SCHEDULER_MARKERS), re.M)

#: Slurm's end-of-job line names the job it ended ("*** JOB 4242 ...", "*** STEP 4242.0 ...").
_SLURM_END_JOB_RE = re.compile(r"\*\*\* (?:JOB|STEP) ([\w+-]+)[\w.+-]* (?:ON \S+ )?CANCELLED")


def _other_jobs_line(line, job_ids):
    m = _SLURM_END_JOB_RE.search(line)
    return bool(m) and m.group(1).split("+")[0] not in job_ids


def _without_other_jobs(text, facts):
    """(text, facts) with Slurm end-of-job lines that name another job blanked (line numbers
    kept): an old log the program quotes is no verdict on this job, and a requeue on it
    would loop. facts["job_ids"]: this job's ids (its own, ARRAYID_TASK); none, no filter."""
    ids = facts.get("job_ids")
    if not ids or "CANCELLED" not in text:
        return text, facts
    text = "\n".join("" if _other_jobs_line(r, ids) else r for r in text.split("\n"))
    noted = facts.get("noted_lines")
    if isinstance(noted, (list, tuple)):
        facts = dict(facts, noted_lines=[p for p in noted if not (
            isinstance(p, (list, tuple)) and len(p) == 2 and _other_jobs_line(str(p[1]), ids))])
    return text, facts


def _marked_lines(raws, first_line):
    """[(line number, line)] of the lines holding a SCHEDULER_MARKERS string (the first
    EVIDENCE_MAX_LINES), in find_evidence's form: a text's head that the analysis skips may
    hold the scheduler's verdict (other errors up there were handled: the run went on)."""
    text, found, pos, number = "\n".join(raws), [], 0, first_line
    for m in _SCHEDULER_MARKER_RE.finditer(text):
        if m.start() < pos:
            continue  # a second marker on a line already taken
        start = text.rfind("\n", 0, m.start()) + 1
        end = text.find("\n", m.start())
        end = len(text) if end < 0 else end
        number += text.count("\n", pos, start)
        found.append((number, text[start:end][:MAX_LINE_CHARS]))
        if len(found) >= EVIDENCE_MAX_LINES:
            break
        pos = end
    return found


#: A line a program prints at error level in its own words (logging's "ERROR", glog's "E1203",
#: sys.exit("error: ..."), "[FATAL]"): evidence when no rule knows the cause.
_ERROR_LEVEL_RE = re.compile(r"\b(?:ERROR|FATAL|CRITICAL)\b|^(?:[Ee]rror|[Ff]atal)\b|^E\d{4} \d\d:")
LAST_ERROR_LOOKBACK = 50  # raw lines from the end searched for it


def _with_last_error_line(verdict, raws, first_line):
    """The verdict with the last error-level line of the output as its evidence, if there is one
    near the end (gpualert's own blocks aside): the reader sees what the program said."""
    for i in range(len(raws) - 1, max(-1, len(raws) - 1 - LAST_ERROR_LOOKBACK), -1):
        line = raws[i].strip()
        if line and not line.startswith(HEADER_MARK) and _ERROR_LEVEL_RE.search(line):
            evidence = _masked_cut(clean_line(line), 0, EVIDENCE_CHARS)
            return verdict._replace(line=first_line + i, evidence=evidence, detail="%s; its last error line: %s" % (
                verdict.detail, evidence[:120]))
    return verdict


HINT_WARNING_DEATH = (
    "The command died of the early warning (Slurm's --signal=B:%(short)s@N) that gpualert "
    "passed on to the processes that catch it; a launcher that catches it (srun) hands it to every "
    "task, and a task with no handler dies of it, before the limit. Give every process that gets "
    "it a handler that checkpoints (Python: signal.signal(signal.%(sig)s, handler)), or remove the "
    "#SBATCH --signal line. (--signal without B: sends it to the srun tasks directly: they need "
    "the handler all the same.)")
HINT_HANG = ("It printed nothing for the last %s of the run, more than twice any silence before: it "
             "most likely hung after the line shown, and more time would not help. Find where it waits: `py-spy dump --pid PID` while it "
             "hangs (every rank's), or faulthandler.dump_traceback_later; for a collective "
             "(allreduce, barrier) rerun with NCCL_DEBUG=INFO TORCH_DISTRIBUTED_DEBUG=DETAIL, and "
             "look for the rank that stopped first (a data loader or a file read it waits on).")


def _as_hang(verdict, facts):
    """A time limit (--timeout, the scheduler's) that stopped a command silent for most of
    its end (facts["hang"], see ChildPump._check_hang) is told as the hang it was."""
    hang = facts.get("hang")
    if verdict.cls != "walltime" or not isinstance(hang, dict) or not hang.get("silent_s"):
        return verdict
    silent = human_duration(hang["silent_s"])
    by = "gpualert's --timeout" if verdict.rule == "wrapper_timeout" else "the time limit"
    return verdict._replace(
        rule="hang", detail="hung: no output for the last %s before %s stopped it" % (silent, by),
        line=hang.get("line"), evidence=_masked_cut(clean_line(hang.get("last_line") or ""), 0, EVIDENCE_CHARS),
        remediation=HINT_HANG % silent)


def _with_run_time(verdict, facts):
    """A time limit's hint says how long the run ran and what the limit was, when the
    wrapper knows (facts elapsed_s and time_limit_s, in seconds)."""
    if verdict.cls != "walltime":
        return verdict
    said = []
    for key, words in (("elapsed_s", "It ran %s"), ("time_limit_s", "the limit was %s")):
        value = facts.get(key)
        if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0:
            said.append(words % human_duration(value))
    if not said:
        return verdict
    return verdict._replace(remediation="%s %s." % (verdict.remediation, "; ".join(said)))


def _with_memory_limit(verdict, facts):
    """A host-memory failure names the limit that bit: the address-space limit (ulimit -v)
    the job inherited, where "request more memory" would not help; else the cgroup's."""
    if verdict.cls not in ("ram_oom", "oom_killer"):
        return verdict
    rlimit_as, cgroup = facts.get("rlimit_as_bytes"), facts.get("memory_limit_bytes")
    if verdict.cls == "ram_oom" and _count(facts, "rlimit_as_bytes") > 0:
        return verdict._replace(remediation=(
            "The process hit its address-space limit (ulimit -v: %s), not the node's RAM: raise or "
            "remove `ulimit -v` where the job sets it (CUDA and PyTorch map far more address space "
            "than they use); --mem does not change it." % _format_size(rlimit_as)))
    if _count(facts, "memory_limit_bytes") > 0:
        return verdict._replace(remediation="%s The limit that bit: the job's cgroup memory limit, %s "
                                      "(Slurm's --mem)." % (verdict.remediation, _format_size(cgroup)))
    return verdict


def _fallback(facts, exc):
    try:
        c = _resolve(None, facts)
        return c._replace(detail="classifier error (%s); %s" % (exc, c.detail))
    except Exception:
        failed = facts.get("exit_code") not in (0, None)
        return Classification("unknown" if failed else None, None, "classifier error: %s" % exc,
                              None, "", "Read the end of the log." if failed else "")


def _first_line_of_tail(text, total_lines):
    if not isinstance(total_lines, int) or isinstance(total_lines, bool) or total_lines <= 0:
        return 1
    here = text.count("\n") + (1 if text and not text.endswith("\n") else 0)
    return max(1, total_lines - here + 1)


def _decode(data):
    return bytes(data).decode("utf-8", "replace")


def count_newlines(f, stop, chunk=1 << 20):
    """Count b'\\n' in the first stop bytes of the open binary file f (bounded memory)."""
    buf = bytearray(chunk)
    view = memoryview(buf)
    f.seek(0)
    total, left = 0, stop
    while left > 0:
        n = f.readinto(view[:min(chunk, left)])
        if not n:
            break
        total += buf.count(b"\n", 0, n)
        left -= n
    return total


_RUN_HEADER_KEYS = ("command", "host", "cwd", "start", "pid", "gpualert", "scheduler", "rank")
#: The keys of the blocks gpualert appends: "command ended" (footer_fields), "output after the
#: command ended" and "cause" (_cause_fields), whose evidence line repeats what it matched.
_RUN_RECORD_KEYS = _RUN_HEADER_KEYS + (
    "end", "duration", "exec failed", "signal", "exit", "timeout", "signals received", "lost",
    "bytes", "drained for", "class", "detail", "line", "evidence", "hint")


def _blank_run_headers(text):
    """A gpualert log's own blocks made empty (line numbers kept): its header's `command:` line
    is what the user typed, and its cause block restates an earlier verdict; neither is
    evidence (`--on-oom "CUDA out of memory"` is not a cause; `gpualert classify` of a
    finished run's log must judge the output, not the last verdict)."""
    if HEADER_MARK not in text:
        return text
    lines, in_block = text.split("\n"), False
    for n, line in enumerate(lines):
        if line.startswith(HEADER_MARK):
            in_block, lines[n] = True, ""
        elif in_block and line.split(":", 1)[0] in _RUN_RECORD_KEYS:
            lines[n] = ""
        else:
            in_block = False
    return "\n".join(lines)


# ==== Pure core: metrics from the log ====

# Training logs state their progress in a few shapes: `key=value` (Lightning/tqdm postfixes,
# argparse-style loops), `key: value` (Keras, PyTorch examples, JAX/flax loops), quoted dict
# keys (HF Trainer's `{'loss': 0.41, 'epoch': 1.2}`, JSON-lines loggers) and `key value` for
# the few words that are always metrics or counters (`iter 100: loss 2.34`). One regex finds
# every pair on a line; the name decides what a pair is. Nothing here runs while the child
# streams: the log is read after exit, and only a bounded sample of it (see read_log_sample).
_METRIC_PAIR_RE = re.compile(
    r"""(?<![\w.])['"]?([A-Za-z][\w./-]*(?:[ ][A-Za-z][\w/-]*)?)['"]?"""
    r"""(\s*[:=]\s*|[ ]+)(?:tensor\(|['"])?"""
    r"""([-+]?(?:\d+\.?\d*(?:[eE][-+]?\d+)?|\.\d+(?:[eE][-+]?\d+)?)|[-+]?nan|[-+]?inf)"""
    r"""(?![\w.]|[:/]\S)""", re.I)
_EPOCH_OF_RE = re.compile(r"\bepoch\s*[:=]?\s*\[?(\d+)\s*/\s*(\d+)", re.I)  # Keras "Epoch 3/10"
# "Step 50/500", "iter: 50/500", "global_step [50/500]": a count of the whole run (a batch
# count is the epoch's, so it is not one)
_STEP_OF_RE = re.compile(r"\b(?:global[_ ]?)?(?:step|iter(?:ation)?|update)s?\s*[:=#]?\s*\[?\s*"
                         r"(\d+)\s*/\s*(\d+)(?![\d./])", re.I)
# tqdm "| 450/1000 [", Keras "1875/1875 [===" and "1875/1875 ━━", PyTorch examples "[640/60000 ("
_PROGRESS_COUNT_RE = re.compile(r"(?:^\s*|\|\s*|\[)(\d+)/(\d+)(?:\s+\[|\s+\S*\u2501|\s+\()")
_DIGIT_RE = re.compile(r"\d")
_LOGGED_EPOCH_RE = re.compile(r"""['"]epoch['"]\s*:""")
_GRAD_NORM_RE = re.compile(r"(?:^|[/_])grad(?:ient)?_?norm$")
_TQDM_COUNT_RE = re.compile(r"\|\s*(\d+)/(\d+)\s+\[")  # tqdm's "| 450/1000 [00:10<00:12, ..."
# A bar whose description says it is not the training loop's (saving, loading, downloading,
# evaluating) gives neither the progress nor the speed. The descriptions are the frameworks'
# own: transformers 5 "Writing model shards" (modeling_utils.py, save_pretrained) at every
# save and "Loading weights" (core_model_loading.py); huggingface_hub "Fetching N files" and
# "Downloading ..."; Lightning "Validation|Sanity Checking|Testing|Predicting DataLoader 0";
# datasets "Map", "Filter", "Generating train split".
_OTHER_BAR_RE = re.compile(
    r"^\W*(?:Writing|Loading|Saving|Fetching|Download|Upload|Reconstruct|Pars|Convert|Validation|"
    r"Sanity Checking|Testing|Predicting|Evaluat|Map|Filter|Generating|Tokeniz)[^|\n]*?:\s*\d+%\|", re.I)
# A speed is a number bound to a unit that means speed. The unit is bound to the number
# written against it ("9.8it/s", tqdm), else to the number that follows it as a label does
# ("it/s 9.8", "ms/batch 25.03", "samples/sec: 310"), else to the number before it across a
# space ("speed 9.8 it/s"): in "loss 0.3586 it/s 9.8" the 0.3586 is the loss's.
_RATE_UNIT = (r"(?:(?:it|samples?|tokens?|toks?|img|images?|seqs?|ex|examples?|steps?|"
              r"batch(?:es)?|frames?)/s(?:ec)?|(?:m?s)/(?:it(?:er)?|steps?|batch|sample))")
_RATE_NUMBER = r"(\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)"
_RATE_UNIT_RE = re.compile(r"(?<![A-Za-z_/])%s(?![\w/])" % _RATE_UNIT, re.I)
_RATE_ATTACHED_RE = re.compile(r"(?<![\w.])%s$" % _RATE_NUMBER)
_RATE_AFTER_RE = re.compile(r"""['"]?\s*[:=]?\s*['"]?%s(?![\w./]|:\d)""" % _RATE_NUMBER)
_RATE_BEFORE_RE = re.compile(r"(?<![\w.:/])%s\s*[:=]?\s+$" % _RATE_NUMBER)
# HF Trainer's and others' keys: 'train_samples_per_second': 40.0, tokens_per_sec=1234
# (an evaluation's speed, eval_samples_per_second, is not the training's)
_RATE_KEY_RE = re.compile(
    r"(?<![\w-])(?!(?:eval|val|valid|validation|test|predict)_)(?:\w+_)?"
    r"(samples|steps|tokens|tok|it|images|examples)_per_sec(?:ond)?['\"]?\s*[:=]\s*"
    + _RATE_NUMBER + r"(?![\w.])", re.I)
_STEP_KEYS = frozenset(("step", "global_step", "steps", "iter", "iters", "iteration", "it",
                        "batch", "update", "updates", "num_updates", "trainer/global_step"))
# A bare `name value` pair (no ':' or '=') counts only for these words: elsewhere it is prose.
_SPACED_KEYS = frozenset(("loss", "step", "iter", "iteration", "epoch", "acc", "accuracy",
                          "lr", "ppl", "perplexity"))
_LOSS_WORDS = ("loss", "nll", "ppl", "perplexity", "mse", "mae", "rmse", "wer", "cer", "error",
               "err")
_GAIN_WORDS = ("acc", "accuracy", "f1", "bleu", "rouge", "auc", "map", "top1", "top5",
               "precision", "recall", "iou", "miou", "dice", "psnr", "ssim", "reward", "return",
               "score", "r2")
_NOT_METRIC_SUFFIXES = ("scale", "weight", "coef", "coeff", "type", "fn", ".py", "_id", "seed",
                        "code", "count", "size", "time", "_s", "_ms", "runtime")
_EVAL_PREFIXES = ("val", "valid", "validation", "eval", "test", "dev")
METRIC_POINTS_MAX = 300       # kept per series, whatever the log's length
METRIC_MAIN_MAX = 4           # plotted and reported without --metric
METRIC_OTHERS_MAX = 12        # other names whose last value run.json keeps
METRIC_LINE_MAX_CHARS = 4000  # longer lines are data dumps, not progress lines
METRIC_EDGE_LINES = 1000      # lines parsed from the head and from the tail of a sampled log
METRIC_BLOCK_LINES = 16       # lines parsed from each block between them
GPUALERT_RECORD_KEYS = frozenset((
    "command", "host", "cwd", "start", "pid", "gpualert", "scheduler", "rank", "end",
    "duration", "exec failed", "signal", "exit", "timeout", "signals received", "lost",
    "class", "detail", "line", "evidence", "hint"))


def metric_key(raw):
    """'Train Loss' -> 'train_loss'; 'eval/accuracy' stays 'eval/accuracy'."""
    return re.sub(r"[\s-]+", "_", raw.strip().lower())


def metric_direction(name):
    """'min' for loss-like names, 'max' for accuracy-like ones, None when the name says neither."""
    words = re.split(r"[_/.\s]+", name.lower())
    if any(w.endswith(_NOT_METRIC_SUFFIXES) for w in words[-1:]) or "lr" in words:
        return None
    if any(w in _LOSS_WORDS or w.endswith("loss") for w in words):
        return "min"
    if any(w in _GAIN_WORDS for w in words):
        return "max"
    return None


_DIRECTION_CACHE = {}


def _direction_cached(name):
    # A cached None ("neither") is a hit too: most names on a progress line (tokens/s, shard)
    # are not metrics, and recomputing them was a third of the metrics' time on a 5 MiB log.
    if name in _DIRECTION_CACHE:
        return _DIRECTION_CACHE[name]
    direction = metric_direction(name)
    if len(_DIRECTION_CACHE) < 4096:
        _DIRECTION_CACHE[name] = direction
    return direction


def parse_metric_line(line):
    """One output line -> (rank or None, {name: float}) of the metric-like pairs on it."""
    rank, end = rank_prefix(line)
    line = line[end:]
    pairs = {}
    for raw, sep, value in _METRIC_PAIR_RE.findall(line):
        key = _KEY_CACHE.get(raw)
        if key is None:
            key = metric_key(raw)
            if len(_KEY_CACHE) < 4096:
                _KEY_CACHE[raw] = key
        if not sep.strip() and key.rsplit("_", 1)[-1] not in _SPACED_KEYS:
            continue
        if key.endswith(_NOT_METRIC_SUFFIXES) or key in pairs:
            continue
        pairs[key] = float(value)
    return rank, pairs


_KEY_CACHE = {}


# A line that says a checkpoint was written: HF Trainer's "Saving model checkpoint to DIR",
# Lightning's "saving model to '...ckpt'", DeepSpeed's "Saving model checkpoint: PATH", and
# a loop's own print("saved", path). Its checkpoint-like path tokens are the paths written.
_SAVE_WORD_RE = re.compile(r"\b(?:sav(?:e|ed|es|ing)|wr(?:ote|itten|iting)|stored|dump(?:ed|ing))\b", re.I)
_PATH_TOKEN_RE = re.compile(r"""(?:^|[\s'"(\[=,:])((?:[~\w.+=@-]*/)*[\w.+=@-]*[\w=-])(?=$|[\s'")\],;:]|\.\s|\.$)""")
# A path that may hold spaces: quoted (Lightning's 'saving model to '...''), or the rest of
# the line after "checkpoint to" (HF's "Saving model checkpoint to /x/my runs/checkpoint-6").
_SPACED_PATH_RE = re.compile(r"""'([^'\n]*/[^'\n]*)'|"([^"\n]*/[^"\n]*)"|checkpoint to (\S.*?)\s*$""")
CHECKPOINT_SAVES_MAX = 50  # save lines remembered per log (the newest)


_LOAD_WORD_RE = re.compile(r"\b(?:load(?:s|ed|ing)?|resum(?:e|es|ed|ing)|restor(?:e|es|ed|ing))\b", re.I)


def saved_checkpoint_paths(line):
    """The checkpoint paths a log line says were written (as written: maybe relative). A
    spaced path and its tail both come out: only the one that exists counts."""
    return _checkpoint_paths(line) if _SAVE_WORD_RE.search(line) else []


def loaded_checkpoint_paths(line):
    """The checkpoint paths a log line says are read ("resuming from ckpt/epoch_3.pt")."""
    return _checkpoint_paths(line) if _LOAD_WORD_RE.search(line) and not _SAVE_WORD_RE.search(line) else []


def _checkpoint_paths(line):
    out = []
    spaced = ["".join(m) for m in _SPACED_PATH_RE.findall(line)]
    for token in spaced + _PATH_TOKEN_RE.findall(line):
        path = checkpoint_root(token) if "/" in token or "." in token else None
        if path and path not in out:
            out.append(path)
    return out


# A framework's folder that is one checkpoint, its files the parts: HF Trainer's checkpoint-600,
# Accelerate's checkpoint_3, DeepSpeed's global_step600
_STEP_FOLDER_RE = re.compile(r"^(?:checkpoint[-_]|global_step)\d+$", re.I)


def checkpoint_root(path):
    """The checkpoint a path names: itself when it looks like one ('/w/ckpt_42/step_200.pt'
    is that file), the step folder it lies in ('.../checkpoint-600/model.safetensors' ->
    '.../checkpoint-600'), else the numbered checkpoint folder it lies in ('run/ckpt_7/
    config.json' -> 'run/ckpt_7'); None when nothing in it looks like a checkpoint."""
    import fnmatch
    parts = path.split("/")
    folders = [n for n, part in enumerate(parts[:-1]) if re.search(r"\d", part)  # "checkpoints/" holds them
               and any(fnmatch.fnmatchcase(part.lower(), p) for p in CHECKPOINT_PATTERNS)]
    for n in folders:
        if _STEP_FOLDER_RE.match(parts[n]):
            return "/".join(parts[:n + 1]) or None
    if any(fnmatch.fnmatchcase(parts[-1].lower(), p) for p in CHECKPOINT_PATTERNS):
        return path
    return "/".join(parts[:folders[0] + 1]) or None if folders else None


def parse_rate(line):
    """The speed a line states, as 'number unit' ('9.8 it/s'), or None. A unit takes the
    number written against it, else the number after it (a label), else the one before it."""
    if "/s" not in line and "_per_sec" not in line and "s/" not in line:
        return None
    for n, unit in enumerate(_RATE_UNIT_RE.finditer(line)):
        if n >= 8:  # a line of many units is not a progress line (and stays linear)
            break
        before, after = line[max(0, unit.start() - 40):unit.start()], line[unit.end():unit.end() + 40]
        m = (_RATE_ATTACHED_RE.search(before) or _RATE_AFTER_RE.match(after)
             or _RATE_BEFORE_RE.search(before))
        if m:
            return "%s %s" % (m.group(1), unit.group(0))
    m = _RATE_KEY_RE.search(line)
    if m:
        return "%s %s/s" % (m.group(2), m.group(1).lower())
    return None


class MetricParser(object):
    """Accumulates metric records from log lines; the step/epoch context carries over lines
    (Keras prints 'Epoch 3/10' on a line of its own). One parser per run; pure."""

    def __init__(self):
        self.records = {}   # rank -> [(step, epoch, {name: value})]
        self._rates = {}    # "main" (rank 0 or unprefixed) / "other" -> the last rate it stated
        self.totals = {}    # "step"/"epoch" -> the run's stated total (Step 50/500, Epoch 3/10)
        self._epoch = None
        self._epoch_one_based = False
        self._epoch_logged = False  # the epoch came from a log record's key ({'epoch': 0.375}, HF's)
        self.bar = None         # (N, M) of the last tqdm bar outside an epoch: the Progress row's
        self.lines = 0          # lines fed: the order of saves and of the first non-finite loss
        self.saves = []         # [(line, path)] checkpoints the log says it wrote
        self.loads = {}         # path -> line: checkpoints it says it read and did not write after
        self._nonfinite = {}    # rank -> (line, step, epoch) of the first of its final non-finite losses
        self._norm_streak = {}  # rank -> (line, step, epoch) where its non-finite grad norms began
        self._bad_names = {}    # rank -> the loss names whose finite value ends its non-finite run

    def reset_context(self):
        """A gap in the sample: the epoch seen before it says nothing about what follows."""
        self._epoch = None

    def feed(self, line):
        self.lines += 1
        if len(line) > METRIC_LINE_MAX_CHARS:
            return
        for path in saved_checkpoint_paths(line):
            self.saves = self.saves[-(CHECKPOINT_SAVES_MAX - 1):] + [(self.lines, path)]
            self.loads.pop(path, None)  # written after it was read: the save counts
        for path in loaded_checkpoint_paths(line):
            if len(self.loads) < CHECKPOINT_SAVES_MAX:
                self.loads[path] = self.lines
        if not _DIGIT_RE.search(line) or _OTHER_BAR_RE.match(line):
            return
        m = _EPOCH_OF_RE.search(line)
        if m:
            self._epoch, self._epoch_one_based = float(m.group(1)), True
            self._epoch_logged = False
            self.totals["epoch"] = int(m.group(2))
        rank, pairs = parse_metric_line(line)
        rate = parse_rate(line)
        if rate:  # rank 0's speed is the run's; another rank's only when rank 0 states none
            self._rates["main" if rank in (None, 0) else "other"] = rate
        step = epoch = None
        m = _STEP_OF_RE.search(line)
        if m:
            step, self.totals["step"] = float(m.group(1)), int(m.group(2))
        elif self._epoch is None or self._epoch_logged:  # a bar outside any epoch counts the run's
            # steps; so does HF Trainer's, though its log records carry a fractional 'epoch'
            m = _TQDM_COUNT_RE.search(line)
            if m and 0 < int(m.group(2)):
                self.bar = (int(m.group(1)), int(m.group(2)))
        for key in list(pairs):
            if key in _STEP_KEYS or key.rsplit("/", 1)[-1] in _STEP_KEYS:
                step = pairs.pop(key)
            elif key.rsplit("/", 1)[-1].endswith("epoch"):
                self._epoch, self._epoch_one_based = pairs.pop(key), False
                self._epoch_logged = bool(_LOGGED_EPOCH_RE.search(line))
        if self._epoch is not None:
            epoch = self._epoch_with_fraction(line)
        if any(_direction_cached(k) for k in pairs):
            self._placeholder_losses(pairs)
            self.records.setdefault(rank, []).append((step, epoch, pairs))
            self._track_nonfinite(rank, pairs, (self.lines, step, epoch))

    def _track_nonfinite(self, rank, pairs, where):
        """Per rank: where its final non-finite run began. A finite loss ends a non-finite
        one (a skipped fp16 step); a non-finite grad norm counts once the next logged one is
        non-finite too: an AMP loss scaler skips an isolated inf step and goes on."""
        losses = dict((k, v) for k, v in pairs.items() if _direction_cached(k) == "min")
        norms = [v for k, v in pairs.items() if _GRAD_NORM_RE.search(k)]
        bad = [k for k, v in losses.items() if not _finite(v)]
        # only the loss that went bad undoes it: the run's average in the closing summary
        # (HF's train_loss) is finite whatever the last steps were
        if losses and not bad and set(losses) & self._bad_names.get(rank, set()):
            self._nonfinite.pop(rank, None)
        if norms and all(_finite(v) for v in norms):
            self._norm_streak.pop(rank, None)
        if bad:
            self._bad_names.setdefault(rank, set()).update(bad)
            self._nonfinite.setdefault(rank, where)
        elif norms and not all(_finite(v) for v in norms):
            first = self._norm_streak.setdefault(rank, where)
            if first is not where:  # the second logged step in a row: it persists
                self._bad_names.setdefault(rank, set()).update(losses)
                self._nonfinite.setdefault(rank, first)

    @staticmethod
    def _placeholder_losses(pairs):
        """A loss of exactly 0 beside a non-finite grad norm is no loss value: transformers'
        logging_nan_inf_filter ("replaces NaN/Inf training losses with the average of recent
        valid losses", training_args.py) averages the 0 it restarted from once the steps are
        all NaN. It is recorded as NaN: never the best, and the divergence."""
        if any(_GRAD_NORM_RE.search(k) and not _finite(v) for k, v in pairs.items()):
            for k, v in list(pairs.items()):
                if v == 0 and _direction_cached(k) == "min":
                    pairs[k] = float("nan")

    @property
    def rate(self):
        return self._rates.get("main") or self._rates.get("other")

    @property
    def first_nonfinite(self):
        """(line, step, epoch) of the first final non-finite loss of any rank, or None."""
        return min(self._nonfinite.values(), key=lambda v: v[0]) if self._nonfinite else None

    def _epoch_with_fraction(self, line):
        """Inside an epoch a progress count (450/1000) gives the fraction done."""
        m = _PROGRESS_COUNT_RE.search(line)
        base = self._epoch - (1 if self._epoch_one_based else 0)
        if m and int(m.group(2)) > 0:
            return round(base + min(1.0, int(m.group(1)) / float(m.group(2))), 4)
        return self._epoch

    def main_records(self):
        """The records of one rank: rank 0 (or the unprefixed lines), else the most talkative."""
        if not self.records:
            return []
        for rank in (None, 0):
            if self.records.get(rank):
                return self.records[rank]
        return max(self.records.values(), key=len)


def _finite(value):
    return value == value and value not in (float("inf"), float("-inf"))


def summarize_metrics(records, wanted=None, rate=None, totals=None):
    """Records [(step, epoch, {name: value})] -> the metrics dict of run.json.
    wanted: names from --metric (plotted in that order); else the main loss-like and
    accuracy-like names. Each series: x kind, <= METRIC_POINTS_MAX points, first/best/last.
    totals: {"step"/"epoch": the total the log stated} for progress's "step_total"..."""
    names = _metric_names(records)
    chosen, missing = _choose_metrics(names, wanted)
    series = dict((name, _series(records, name)) for name in chosen)
    others = [n for n in sorted(names, key=lambda n: -names[n]) if n not in series]
    last = {}
    for _, _, pairs in records:
        last.update((k, v) for k, v in pairs.items() if k in others[:METRIC_OTHERS_MAX])
    out = {"main": [n for n in chosen if series[n]["count"]], "series": series,
           "records": len(records), "others": last}
    steps = [s for s, _, _ in records if s is not None]
    epochs = [e for _, e, _ in records if e is not None]
    out["progress"] = {"step": steps[-1] if steps else None, "epoch": epochs[-1] if epochs else None}
    for kind, total in sorted((totals or {}).items()):
        if out["progress"][kind] is not None and 0 < out["progress"][kind] <= total:
            out["progress"][kind + "_total"] = total
    if rate:
        out["throughput"] = rate
    if missing:
        out["notes"] = ["--metric %s: not found in the log" % name for name in missing]
    return out


def _metric_names(records):
    counts = {}
    for _, _, pairs in records:
        for key in pairs:
            counts[key] = counts.get(key, 0) + 1
    return counts


def _choose_metrics(names, wanted):
    if wanted:
        found = [metric_key(w) for w in wanted if metric_key(w) in names]
        return found, [w for w in wanted if metric_key(w) not in names]
    chosen = []
    for direction in ("min", "max"):
        group = [n for n in names if metric_direction(n) == direction]
        group.sort(key=lambda n: (_metric_rank(n), -names[n], n))
        train = [n for n in group if not _is_eval_name(n)][:1]
        evals = [n for n in group if _is_eval_name(n)][:1]
        picked = train + evals
        picked += [n for n in group if n not in picked][:2 - len(picked)]
        chosen += picked
    return chosen[:METRIC_MAIN_MAX], []


def _is_eval_name(name):
    return re.split(r"[_/.]", name, 1)[0] in _EVAL_PREFIXES


def _metric_rank(name):
    """Plain names first: 'loss' before 'train_loss' before 'loss_cls'."""
    base = re.sub(r"^(train|training|val|valid|validation|eval|test|dev)[_/.]", "", name)
    return (0 if base in ("loss", "acc", "accuracy") else 1, len(name))


def _series(records, name):
    rows = [(s, e, i, pairs[name]) for i, (s, e, pairs) in enumerate(records) if name in pairs]
    kind = _x_kind(rows)
    pos = {"step": 0, "epoch": 1, "record": 2}[kind]
    points = [(row[pos], row[3]) for row in rows if row[pos] is not None]
    finite = [p for p in points if _finite(p[1])]
    direction = metric_direction(name)
    out = {"x": kind, "direction": direction, "count": len(points),
           "nonfinite": len(points) - len(finite),
           "points": [[_round(x), _round(y)] for x, y in downsample(finite, METRIC_POINTS_MAX)]}
    if points:
        out["first"] = {"x": _round(points[0][0]), "value": _round(points[0][1])}
        out["last"] = {"x": _round(points[-1][0]), "value": _round(points[-1][1])}
    streak = len(points)
    while streak and not _finite(points[streak - 1][1]):
        streak -= 1
    if streak < len(points):  # the final non-finite run, which the picture marks (it draws finite points)
        out["first_nonfinite_x"] = _round(points[streak][0])
    if finite and direction:
        pick = min if direction == "min" else max
        best = pick(finite, key=lambda p: p[1])
        out["best"] = {"x": _round(best[0]), "value": _round(best[1])}
    return out


def _x_kind(rows):
    """Steps when most records of this metric carry one, else epochs, else their order."""
    for kind, pos in (("step", 0), ("epoch", 1)):
        if rows and sum(1 for r in rows if r[pos] is not None) * 2 > len(rows):
            return kind
    return "record"


def _round(value):
    if not _finite(value):
        return str(value)  # JSON has no NaN; run.json says "nan"
    return int(value) if value == int(value) and abs(value) < 1e15 else float("%.6g" % value)


def downsample(points, limit):
    """At most `limit` points that keep the curve's shape: the first and last, and per
    bucket its lowest and highest point, in order (spikes and dips survive)."""
    if len(points) <= limit:
        return list(points)
    buckets = max(1, (limit - 2) // 2)
    inner, out = points[1:-1], [points[0]]
    size = len(inner) / float(buckets)
    for b in range(buckets):
        chunk = inner[int(b * size):int((b + 1) * size)]
        if not chunk:
            continue
        lo = min(range(len(chunk)), key=lambda i: chunk[i][1])
        hi = max(range(len(chunk)), key=lambda i: chunk[i][1])
        out += [chunk[i] for i in sorted(set((lo, hi)))]
    out.append(points[-1])
    return out


def metrics_from_chunks(chunks, wanted=None):
    """Text chunks of one log (in order; a gap between chunks) -> the metrics dict.
    Several chunks are a sample: the first and last are read up to METRIC_EDGE_LINES lines,
    the middle ones up to METRIC_BLOCK_LINES (the time bound is in lines parsed, ~20 us
    each). gpualert's own header and footer records are skipped."""
    parser = MetricParser()
    for n, chunk in enumerate(chunks):
        parser.reset_context()
        in_record = False
        lines = re.split(r"[\r\n]+", chunk)
        if len(chunks) > 1:
            if n == 0:
                lines = lines[:METRIC_EDGE_LINES]
            elif n == len(chunks) - 1:
                lines = lines[-METRIC_EDGE_LINES:]
            else:
                lines = lines[:METRIC_BLOCK_LINES]
        for line in lines:
            if line.startswith(HEADER_MARK):
                in_record = True
                continue
            if in_record and line.split(":", 1)[0] in GPUALERT_RECORD_KEYS:
                continue
            in_record = False
            parser.feed(line)
    out = summarize_metrics(parser.main_records(), wanted, parser.rate, parser.totals)
    if out["progress"]["step"] is None and parser.bar and parser.bar[0] <= parser.bar[1]:
        out["progress"]["step"], out["progress"]["step_total"] = parser.bar
    bad = parser.first_nonfinite
    if bad:
        out["first_nonfinite"] = {"step": bad[1], "epoch": bad[2]}
    if parser.loads:  # a file the run read (and maybe failed to) is not one it wrote
        out["loaded"] = sorted(parser.loads)
    if parser.saves:  # in the log's order; "after_nonfinite": saved after the loss went bad
        out["saved"] = [{"path": path, "after_nonfinite": bool(bad and line > bad[0])}
                        for line, path in parser.saves]
    return out


# ==== Pure core: the run as a picture ====

# A PNG drawn with the standard library alone (zlib and struct): one panel per group of
# metric curves (same direction, same x axis) and one for GPU utilisation and memory over
# time. Palette image: 1 byte a pixel, long white runs, so a 560-pixel-wide picture of
# three panels deflates to a few KB. Colours: Okabe-Ito (safe for colour-blind readers).
PLOT_WIDTH = 560
PLOT_PANEL_HEIGHT = 170
PLOT_MAX_PANELS = 4
PLOT_MAX_BYTES = 40 * 1024
PLOT_PALETTE = ((255, 255, 255), (34, 34, 34), (153, 153, 153), (232, 232, 232),
                (0, 114, 178), (213, 94, 0), (0, 158, 115), (230, 159, 0), (204, 121, 167),
                (86, 180, 233), (253, 226, 212))
_INK, _AXIS, _GRID, _SHADE = 1, 2, 3, 10
PLOT_SERIES_COLOURS = (4, 5, 6, 7, 8, 9)
_PLOT_LEFT, _PLOT_RIGHT, _PLOT_TOP, _PLOT_BOTTOM = 84, 14, 34, 30
_TEXT_SCALE = 2

# 5x7 glyphs, 7 rows of 5 bits (bit 4 is the leftmost pixel), as 14 hex digits.
# Lower case is drawn as upper case.
FONT_5X7 = {
    " ": "00000000000000", "0": "0E11131519110E", "1": "040C040404040E", "2": "0E11010204081F",
    "3": "1F02040201110E", "4": "02060A121F0202", "5": "1F101E0101110E",
    "6": "0608101E11110E", "7": "1F010204080808", "8": "0E11110E11110E", "9": "0E11110F01020C",
    "A": "0E11111F111111", "B": "1E11111E11111E", "C": "0E11101010110E", "D": "1C12111111121C",
    "E": "1F10101E10101F", "F": "1F10101E101010", "G": "0E11101711110F",
    "H": "1111111F111111", "I": "0E04040404040E", "J": "0702020202120C", "K": "11121418141211",
    "L": "1010101010101F", "M": "111B1515111111", "N": "11111915131111", "O": "0E11111111110E",
    "P": "1E11111E101010", "Q": "0E11111115120D", "R": "1E11111E141211", "S": "0F10100E01011E",
    "T": "1F040404040404", "U": "1111111111110E", "V": "11111111110A04", "W": "1111111515150A",
    "X": "11110A040A1111", "Y": "1111110A040404", "Z": "1F01020408101F",
    ".": "00000000000C0C", ",": "000000000C0408",
    ":": "000C0C000C0C00", "-": "0000001F000000", "_": "0000000000001F", "/": "00010204081000",
    "%": "18190204081303", "(": "02040808080402", ")": "08040202020408", "+": "0004041F040400",
    "=": "00001F001F0000", "@": "0E11010D15150E", "[": "0E08080808080E", "]": "0E02020202020E",
    "'": "0C040800000000", "#": "0A0A1F0A1F0A0A", ">": "08040201020408", "<": "02040810080402",
    "?": "0E110102040004", "*": "00150E1F0E1500", "|": "04040404040404",
}


class Canvas(object):
    """A palette-indexed image in a bytearray; drawing clips at the edges."""

    def __init__(self, width, height):
        self.width, self.height = width, height
        self.pixels = bytearray(width * height)

    def dot(self, x, y, colour, size=1):
        for dy in range(size):
            for dx in range(size):
                px, py = x + dx, y + dy
                if 0 <= px < self.width and 0 <= py < self.height:
                    self.pixels[py * self.width + px] = colour

    def hline(self, x0, x1, y, colour):
        if 0 <= y < self.height:
            x0, x1 = max(0, min(x0, x1)), min(self.width - 1, max(x0, x1))
            self.pixels[y * self.width + x0:y * self.width + x1 + 1] = bytes((colour,)) * (x1 - x0 + 1)

    def vline(self, x, y0, y1, colour):
        for y in range(min(y0, y1), max(y0, y1) + 1):
            self.dot(x, y, colour)

    def line(self, x0, y0, x1, y1, colour, *, size=2):
        """Bresenham, with a size x size brush."""
        dx, dy = abs(x1 - x0), -abs(y1 - y0)
        sx, sy = (1 if x0 < x1 else -1), (1 if y0 < y1 else -1)
        err = dx + dy
        while True:
            self.dot(x0, y0, colour, size)
            if x0 == x1 and y0 == y1:
                return
            e2 = 2 * err
            if e2 >= dy:
                err += dy
                x0 += sx
            if e2 <= dx:
                err += dx
                y0 += sy

    def text(self, x, y, text, colour=_INK, scale=_TEXT_SCALE):
        """Draw text with its top-left at (x, y); -> the x after it."""
        for char in str(text).upper():
            rows = FONT_5X7.get(char, FONT_5X7["?"])
            for r in range(7):
                bits = int(rows[2 * r:2 * r + 2], 16)
                for c in range(5):
                    if bits & (0x10 >> c):
                        self.dot(x + c * scale, y + r * scale, colour, scale)
            x += 6 * scale
        return x


def text_width(text, scale=_TEXT_SCALE):
    return len(str(text)) * 6 * scale


def encode_png(canvas, palette=PLOT_PALETTE):
    """The canvas as PNG bytes: 8-bit palette, every scanline with filter 0, deflate level 9."""
    import struct
    import zlib

    def chunk(kind, data):
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body) & 0xFFFFFFFF)
    w, h = canvas.width, canvas.height
    raw = bytearray()
    for y in range(h):
        raw.append(0)
        raw += canvas.pixels[y * w:(y + 1) * w]
    plte = b"".join(struct.pack("BBB", *rgb) for rgb in palette)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 3, 0, 0, 0))
            + chunk(b"PLTE", plte) + chunk(b"IDAT", zlib.compress(bytes(raw), 9))
            + chunk(b"IEND", b""))


def format_number(value):
    """Short, readable tick and summary numbers: 0.0412, 1.23e-05, 12.5k, 900."""
    if not isinstance(value, (int, float)) or not _finite(value):
        return str(value)
    magnitude = abs(value)
    if magnitude == 0:
        return "0"
    if magnitude >= 1e12:  # past the largest unit: "1e+06G" would hide the magnitude
        return ("%.3g" % value).replace("e+0", "e+")
    if magnitude >= 1e5:
        for div, unit in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
            if magnitude >= div:
                return ("%.3g" % (value / div)) + unit
    if magnitude < 1e-3:
        return "%.2e" % value
    if value == int(value):
        return "%d" % value
    return "%.4g" % value


def plot_panels(metrics, gpu):
    """What to draw: [{"title", "x_label", "series": [(name, colour, [(x, y)])]}]."""
    panels, groups = [], []
    metrics = metrics or {}
    for name in metrics.get("main") or []:
        s = metrics["series"].get(name) or {}
        if len(s.get("points") or []) < 2:
            continue
        key = (s.get("direction"), s.get("x")) if s.get("direction") else (name, s.get("x"))
        for group in groups:
            if group[0] == key:
                group[1].append(name)
                break
        else:
            groups.append((key, [name]))
    colours = iter(PLOT_SERIES_COLOURS * 3)
    for (_, x_kind), names in groups:
        series = [(n, next(colours), [(p[0], p[1]) for p in metrics["series"][n]["points"]])
                  for n in names]
        panel = {"title": " ".join(names), "x_label": x_kind, "series": series}
        panel.update(_nonfinite_span([metrics["series"][n] for n in names]))
        panels.append(panel)
    rows = (gpu or {}).get("series") or []
    if len(rows) >= 2:
        util = [(r[0] / 60.0, r[1]) for r in rows if r[1] is not None]
        mem = [(r[0] / 60.0, r[2]) for r in rows if r[2] is not None]
        series = [s for s in (("gpu util %", 4, util), ("gpu mem %", 5, mem)) if len(s[2]) >= 2]
        if series:
            panels.append({"title": "gpu", "x_label": "minutes", "series": series,
                           "y_range": (0.0, 100.0)})
    return panels[:PLOT_MAX_PANELS]


def _nonfinite_span(series):
    """{"nan_from": x, "x_end": x}: where a curve first went non-finite and the last step
    reported, so the picture runs to the end and marks the span it cannot draw; or {}."""
    starts = [s["first_nonfinite_x"] for s in series
              if isinstance(s.get("first_nonfinite_x"), (int, float))]
    ends = [s["last"]["x"] for s in series if isinstance((s.get("last") or {}).get("x"), (int, float))]
    if not starts:
        return {}
    return {"nan_from": min(starts), "x_end": max(ends + starts)}


def render_plot(metrics, gpu, width=PLOT_WIDTH):
    """(PNG bytes, layout) for a run's curves, or (None, []) when there is nothing to draw.
    layout: one dict per panel with its plot box and data ranges (where a value is drawn)."""
    panels = plot_panels(metrics, gpu)
    while panels:
        canvas = Canvas(width, PLOT_PANEL_HEIGHT * len(panels))
        layout = [_draw_panel(canvas, p, n * PLOT_PANEL_HEIGHT) for n, p in enumerate(panels)]
        png = encode_png(canvas)
        if len(png) <= PLOT_MAX_BYTES:
            return png, layout
        panels = panels[:-1]  # the GPU panel (last) goes first
    return None, []


def _draw_panel(canvas, panel, top):
    box = {"x0": _PLOT_LEFT, "x1": canvas.width - _PLOT_RIGHT, "y0": top + _PLOT_TOP,
           "y1": top + PLOT_PANEL_HEIGHT - _PLOT_BOTTOM}
    points = [p for _, _, pts in panel["series"] for p in pts]
    xs = [p[0] for p in points] + ([panel["x_end"]] if panel.get("x_end") is not None else [])
    xmin, xmax = min(xs), max(xs)  # to the last step reported, past the last finite point
    ymin, ymax = panel.get("y_range") or (min(p[1] for p in points), max(p[1] for p in points))
    if ymax == ymin:
        ymin, ymax = ymin - 1.0, ymax + 1.0
    if xmax == xmin:
        xmax = xmin + 1.0
    box.update(xmin=xmin, xmax=xmax, ymin=ymin, ymax=ymax, top=top)

    def to_px(x, y):
        px = box["x0"] + (x - xmin) * (box["x1"] - box["x0"]) / float(xmax - xmin)
        py = box["y1"] - (y - ymin) * (box["y1"] - box["y0"]) / float(ymax - ymin)
        return int(round(px)), int(round(py))
    box["to_px"] = to_px
    if panel.get("nan_from") is not None:
        _draw_nonfinite(canvas, box, panel["nan_from"])
    _draw_axes(canvas, box, panel)
    x = 8
    for name, colour, pts in panel["series"]:  # legend: the title, each name in its colour
        x = canvas.text(x, top + 8, name, colour) + 14
        for (ax, ay), (bx, by) in zip(pts, pts[1:]):
            canvas.line(*(to_px(ax, ay) + to_px(bx, by) + (colour,)))
        if len(pts) == 1:
            canvas.dot(*(to_px(*pts[0]) + (colour, 3)))
    return box


def _draw_nonfinite(canvas, box, x):
    """A shaded span from the first non-finite value to the end, a marker line at its start
    and the word NAN: the curve stops there, the run did not."""
    px = max(box["x0"], min(box["x1"], box["to_px"](x, box["ymin"])[0]))
    for y in range(box["y0"], box["y1"] + 1):
        canvas.hline(px, box["x1"], y, _SHADE)
    canvas.line(px, box["y0"], px, box["y1"], PLOT_SERIES_COLOURS[1])
    label_x = px + 4 if px + 4 + text_width("NAN") <= box["x1"] else px - 4 - text_width("NAN")
    canvas.text(label_x, box["y0"] + 2, "NAN", PLOT_SERIES_COLOURS[1])


def _draw_axes(canvas, box, panel):
    labels = [format_number(box["ymin"] + frac * (box["ymax"] - box["ymin"]))
              for frac in (0.0, 0.5, 1.0)]
    # Right-aligned to the axis; labels wider than the margin are drawn at half size rather
    # than cut at the picture's left edge (`0.03333`, `-1.23e-05`).
    scale = _TEXT_SCALE if max(text_width(t) for t in labels) <= box["x0"] - 8 else 1
    for frac, label in zip((0.0, 0.5, 1.0), labels):
        y = int(round(box["y1"] - frac * (box["y1"] - box["y0"])))
        canvas.hline(box["x0"], box["x1"], y, _GRID if frac else _AXIS)
        x = max(2, box["x0"] - 6 - text_width(label, scale))
        canvas.text(x, y - 7 + (7 * (_TEXT_SCALE - scale)) // 2, label, _INK, scale)
    canvas.vline(box["x0"], box["y0"], box["y1"], _AXIS)
    below = box["y1"] + 6
    canvas.text(box["x0"], below, format_number(box["xmin"]))
    last = format_number(box["xmax"])
    canvas.text(box["x1"] - text_width(last), below, last)
    mid = (box["x0"] + box["x1"] - text_width(panel["x_label"])) // 2
    canvas.text(mid, below, panel["x_label"], _AXIS)


SPARK_CHARS = u"\u2581\u2582\u2583\u2584\u2585\u2586\u2587\u2588"


def sparkline(values, width=24):
    """A one-line Unicode picture of a series (finite values; width characters at most)."""
    values = [v for v in values if isinstance(v, (int, float)) and _finite(v)]
    if not values:
        return ""
    if len(values) > width:
        step = len(values) / float(width)
        values = [values[int(i * step)] for i in range(width - 1)] + [values[-1]]
    lo, hi = min(values), max(values)
    span = (hi - lo) if _finite(hi - lo) and hi > lo else None
    if span is None:  # flat, or a span past the float range (1e308 and -1e308)
        return SPARK_CHARS[0] * len(values) if hi == lo else ""
    return "".join(SPARK_CHARS[min(7, max(0, int(round((v - lo) / span * 7))))] for v in values)


# ==== Pure core: scheduler and GPU records ====

# ---- which scheduler, which job ----

def _env(environ, *names):
    for name in names:
        value = environ.get(name)
        if value not in (None, ""):
            return value
    return None


def _scheduler_label(sched):
    if sched.get("array_job_id") and sched.get("array_task_id") is not None:
        sep = "." if sched["kind"] == "sge" else "_"  # SGE writes a task as 4242.7
        return "%s%s%s" % (sched["array_job_id"], sep, sched["array_task_id"])
    job_id = sched["job_id"]
    return job_id.split(".")[0] if sched["kind"] == "pbs" else job_id  # "1234.server" -> "1234"


# (rank variable, the variables that give the number of ranks), in order of precedence
RANK_VARIABLES = (("SLURM_PROCID", ("SLURM_STEP_NUM_TASKS", "SLURM_NTASKS", "SLURM_NPROCS")),
                  ("RANK", ("WORLD_SIZE",)), ("OMPI_COMM_WORLD_RANK", ("OMPI_COMM_WORLD_SIZE",)),
                  ("PMI_RANK", ("PMI_SIZE",)), ("PMIX_RANK", ()))


def job_rank(environ):
    """This process's rank in a multi-process launch, or None outside one. A rank 0 with no
    size, or of a size-1 launch, is None: Slurm sets SLURM_PROCID=0 in every batch script."""
    for name, size_names in RANK_VARIABLES:
        value = environ.get(name, "").strip()
        if not value.isdigit():
            continue
        size = _env(environ, *size_names) if size_names else None
        size = int(size) if size and size.isdigit() else None
        if int(value) > 0 or (size is not None and size > 1):
            return int(value)
    return None


# ---- parsing scheduler output ----

_SCONTROL_KEY = re.compile(r"(?:^|(?<=\s))([A-Za-z][A-Za-z0-9_:/().]*)=")
#: Fields of free text ("--comment='lr=3e-4 Partition=low'", a job name with spaces and "="):
#: scontrol prints each last on its own line, so there it runs to the line's end; with -o,
#: on one line, nothing tells where it ends, so records whose free text matters (the
#: requeue's) are read without -o.
SCONTROL_FREE_TEXT = ("JobName", "Comment", "Command", "WorkDir", "StdErr", "StdIn", "StdOut")


def parse_scontrol(text, first="JobId"):
    """`scontrol show job [-o]` output -> list of dicts, one per JobId record (`show node`:
    first="NodeName"). Values may hold '=' (TRES=cpu=1,node=1); a value runs to the next ' Key='."""
    records = []
    text = text or ""
    starts = [m.start() for m in re.finditer(r"(?m)^\s*%s=" % first, text)]  # not re.split: 3.6
    for begin, end in zip(starts, starts[1:] + [len(text)]):
        chunk = text[begin:end]
        marks = list(_SCONTROL_KEY.finditer(chunk))
        if not marks or marks[0].group(1) != first:
            continue
        rec, multiline, skip_to = {}, "\n" in chunk.strip(), -1
        for i, m in enumerate(marks):
            if m.start() < skip_to:
                continue  # a "Key=" inside free text
            end = marks[i + 1].start() if i + 1 < len(marks) else len(chunk)
            if multiline and m.group(1) in SCONTROL_FREE_TEXT:
                line_end = chunk.find("\n", m.start())
                skip_to = end = line_end if line_end >= 0 else len(chunk)
            rec[m.group(1)] = chunk[m.end():end].strip()
        records.append(rec)
    return records


def parse_slurm_duration(text):
    """'1-02:03:04', '02:03:04', '03:04', '5' (minutes) -> seconds; None for UNLIMITED etc."""
    text = (text or "").strip()
    m = re.match(r"^(?:(\d+)-)?(\d+)(?::(\d+))?(?::(\d+))?$", text)
    if not m:
        return None
    days, a, b, c = m.groups()
    if b is None and days is None:
        return float(int(a) * 60)  # a bare number is minutes (sbatch --time=5)
    parts = [int(x) for x in (a, b, c) if x is not None]
    if days is not None and len(parts) < 3:
        parts += [0] * (3 - len(parts))  # "1-02" is days-hours
    while len(parts) < 3:
        parts.insert(0, 0)
    return float(int(days or 0) * 86400 + parts[0] * 3600 + parts[1] * 60 + parts[2])


def parse_slurm_time(text):
    """'2026-12-02T14:26:44' (local time) -> epoch float; None for Unknown/None/N/A."""
    try:
        return time.mktime(time.strptime((text or "").strip(), "%Y-%m-%dT%H:%M:%S"))
    except ValueError:
        return None


def parse_exit_code(text):
    """Slurm 'N:S' -> (exit code N, signal S); (None, None) when unreadable."""
    m = re.match(r"^\s*(\d+):(\d+)\s*$", text or "")
    return (int(m.group(1)), int(m.group(2))) if m else (None, None)


def parse_pbs_duration(text):
    """PBS walltime: 'HH:MM:SS', or a bare number of SECONDS (unlike Slurm's minutes)."""
    text = (text or "").strip()
    return float(text) if text.isdigit() else parse_slurm_duration(text)


def parse_qstat(text):
    """`qstat -f` (PBS Pro/Torque) -> dict of 'key = value', continuation lines joined."""
    rec, key = {}, None
    for line in (text or "").splitlines():
        m = re.match(r"^\s+([A-Za-z_][\w.]*) = (.*)$", line)
        if m:
            key = m.group(1)
            rec[key] = m.group(2).strip()
        elif key and line.startswith(("\t", "    ")) and line.strip():
            rec[key] += line.strip()  # a wrapped value (Variable_List, paths)
        elif line.startswith("Job Id:"):
            rec["Job Id"] = line.split(":", 1)[1].strip()
    return rec


def parse_sacct(text):
    """`sacct -n -P -o JobID,State,ExitCode` -> list of (jobid, state word, exit text)."""
    rows = []
    for line in (text or "").splitlines():
        cols = line.strip().split("|")
        if len(cols) >= 3 and cols[0]:
            state = cols[1].split()[0].rstrip("+") if cols[1].strip() else ""
            rows.append((cols[0], state, cols[2]))
    return rows


def _usable_end_time(end_time, start):
    """The job's end time, or None when it is before our start (a garbage SLURM_JOB_END_TIME)."""
    return None if end_time and start is not None and end_time < start else end_time


def _reason_from_limit(start, now, time_limit, margin_s=None):
    """Fallback: a SIGTERM within margin_s of the known end of the allocation is walltime.
    By default a tenth of the limit, between END_TIME_MARGIN_S (`--signal=TERM@60`) and
    WALLTIME_MARGIN_S, so a cancel minutes before the end of a short job is not taken for
    its limit; an end time before the start (a garbage SLURM_JOB_END_TIME) is no end time."""
    if isinstance(time_limit, (int, float)):
        time_limit = {"limit_s": float(time_limit)}
    time_limit = time_limit or {}
    end_time, limit_s = time_limit.get("end_time"), time_limit.get("limit_s")
    end_time = _usable_end_time(end_time, start)
    if margin_s is None:
        margin_s = min(WALLTIME_MARGIN_S, max(END_TIME_MARGIN_S, 0.1 * (limit_s or 0)))
    if end_time:
        left = end_time - now
        if left <= margin_s:
            return "walltime", "SIGTERM %+.0fs from the job's end time (%s)" % (
                -left, time_limit.get("source") or "start")
    elif limit_s and start is not None:
        elapsed = now - start
        if elapsed >= limit_s - margin_s:
            return "walltime", "SIGTERM after %.0fs of a %.0fs time limit" % (elapsed, limit_s)
    return None, None


def parse_gpu_line(line):
    """One CSV line of the query above -> dict, or None for a line of another shape."""
    cols = [c.strip() for c in line.split(",")]
    if len(cols) < len(GPU_KEYS):
        return None
    # a name with a comma would shift the columns: rejoin the extra middle
    name = ", ".join(cols[1:len(cols) - len(GPU_KEYS) + 2])
    cols = [cols[0], name] + cols[len(cols) - len(GPU_KEYS) + 2:]
    if not cols[0].isdigit():
        return None
    gpu = {"index": int(cols[0]), "name": cols[1]}
    for key, raw in zip(GPU_KEYS[2:], cols[2:]):
        gpu[key] = _gpu_number(raw, int if key == "ecc_uncorrected" else float)
    return gpu


def _gpu_number(raw, kind):
    try:
        return kind(raw)
    except ValueError:
        return None  # [N/A], [Not Supported], [Unknown Error], ERR!


def summarize_gpu_samples(samples, notes=None):
    """[(time, [gpu dicts])] -> {"samples", "duration_s", "gpus": [...], "ecc_delta", "idle", "notes"}."""
    notes = list(notes or [])
    if not samples:
        return {"samples": 0, "gpus": [], "notes": notes} if notes else {}
    per = {}
    for _, gpus in samples:
        for g in gpus:
            per.setdefault(g["index"], []).append(g)
    summary = [_summarize_gpu(rows) for _, rows in sorted(per.items())]
    deltas = [g["ecc_delta"] for g in summary if g["ecc_delta"] is not None]
    duration = samples[-1][0] - samples[0][0]
    utils = [g["util_max_pct"] for g in summary if g["util_max_pct"] is not None]
    idle = bool(utils) and max(utils) == 0 and duration >= IDLE_MIN_S and len(samples) >= 3
    return {"samples": len(samples), "duration_s": round(duration, 1), "gpus": summary,
            "ecc_delta": sum(deltas) if deltas else None, "idle": idle, "notes": notes,
            "series": gpu_series(samples)}


def gpu_series(samples, limit=METRIC_POINTS_MAX):
    """[[seconds since the first sample, mean utilisation %, memory used % of total]], at most
    `limit` rows, evenly picked (the picture's GPU panel)."""
    rows = []
    t0 = samples[0][0]
    for t, gpus in samples:
        util = [g["util_pct"] for g in gpus if g.get("util_pct") is not None]
        used = sum(g.get("mem_used_mib") or 0 for g in gpus)
        total = sum(g.get("mem_total_mib") or 0 for g in gpus)
        rows.append([round(t - t0, 1), round(sum(util) / len(util), 1) if util else None,
                     round(100.0 * used / total, 1) if total else None])
    if len(rows) > limit:
        step = len(rows) / float(limit)
        rows = [rows[int(i * step)] for i in range(limit - 1)] + [rows[-1]]
    return rows


def _summarize_gpu(rows):
    def values(key):
        return [r[key] for r in rows if r.get(key) is not None]

    def peak(key):
        return max(values(key)) if values(key) else None
    util, ecc = values("util_pct"), values("ecc_uncorrected")
    return {"index": rows[0]["index"], "name": rows[0]["name"],
            "mem_used_peak_mib": peak("mem_used_mib"), "mem_total_mib": peak("mem_total_mib"),
            "util_mean_pct": round(sum(util) / len(util), 1) if util else None,
            "util_max_pct": peak("util_pct"), "temp_max_c": peak("temp_c"),
            "power_max_w": peak("power_w"),
            "ecc_start": ecc[0] if ecc else None, "ecc_end": ecc[-1] if ecc else None,
            "ecc_delta": max(0, ecc[-1] - ecc[0]) if ecc else None}


def _job_info(job_id, state, exit_text, rec, source):
    """The job-info dict cmd_watch reports, with the classifier's facts."""
    state = (state or "").split()[0].rstrip("+") if state else ""
    code, sig = parse_exit_code(exit_text)
    info = {"job_id": job_id, "label": job_id, "state": state, "done": state in SLURM_FINAL_STATES,
            "reason": rec.get("Reason"), "exit_code": code, "signal": sig, "source": source,
            "name": None, "stdout": None, "stderr": None, "end_time": parse_slurm_time(rec.get("EndTime")),
            "start_time": parse_slurm_time(rec.get("StartTime"))}
    info["facts"] = slurm_facts(state, code, sig, rec.get("Reason"))
    return info


def job_info_from_scontrol(rec):
    info = _job_info(rec.get("JobId", ""), rec.get("JobState", ""), rec.get("ExitCode"), rec, "scontrol")
    if rec.get("ArrayTaskId"):
        info["label"] = "%s_%s" % (rec.get("ArrayJobId"), rec["ArrayTaskId"])
    info["name"] = rec.get("JobName")
    if rec.get("Command") not in (None, "", "(null)"):  # the batch script (--wrap: none)
        info["command"] = rec["Command"]
    info["stdout"] = slurm_log_path(rec.get("StdOut"), rec)
    info["stderr"] = slurm_log_path(rec.get("StdErr"), rec)
    if rec.get("StdOut") in (None, "", "(null)") and rec.get("WorkDir"):  # sbatch's default name
        default = "slurm-%A_%a.out" if rec.get("ArrayTaskId") else "slurm-%j.out"
        info["stdout"] = slurm_log_path(os.path.join(rec["WorkDir"], default), rec)
    return info


def slurm_facts(state, code, sig, reason=None):
    """The classifier's facts for a finished Slurm job."""
    facts = {"scheduler_state": state, "exit_code": -sig if sig else code}
    if state in SLURM_STATE_REASONS:
        facts["scheduler_reason"] = SLURM_STATE_REASONS[state]
        facts["scheduler_evidence"] = "Slurm state %s%s" % (state, " (Reason=%s)" % reason if reason else "")
    if state == "OUT_OF_MEMORY":  # Slurm reports 0:125; the kernel's OOM killer sent SIGKILL
        facts.update(exit_code=-9, oom_kill_delta=1, scheduler_evidence="Slurm state OUT_OF_MEMORY")
    if state in ("TIMEOUT", "PREEMPTED", "CANCELLED") and not sig and not code:
        facts["exit_code"] = -15  # killed by the scheduler's SIGTERM (ExitCode shows 0:0)
    return facts


_SLURM_PATTERN = re.compile(r"%(\d*)([%AaJjNnstux])")


def slurm_log_path(pattern, rec):
    """Expand sbatch filename patterns scontrol may leave raw (22.05 leaves %N);
    relative paths are under WorkDir. None for an empty or /dev/null path."""
    if not pattern or pattern in ("(null)", "/dev/null"):
        return None
    array = bool(rec.get("ArrayTaskId"))
    user = (rec.get("UserId") or "").split("(")[0]
    node = (rec.get("BatchHost") or rec.get("NodeList") or "").split(",")[0]
    values = {"A": rec.get("ArrayJobId") if array else rec.get("JobId"),
              "a": rec.get("ArrayTaskId") if array else SLURM_NO_VAL,
              "j": rec.get("JobId"), "J": rec.get("JobId"), "N": node, "n": "0", "s": "batch",
              "t": "0", "u": user, "x": rec.get("JobName")}

    def expand(m):
        if m.group(2) == "%":
            return "%"
        value = values.get(m.group(2)) or ""
        width = int(m.group(1)) if m.group(1) else 0
        return value.zfill(width) if value.isdigit() and width else value
    path = _SLURM_PATTERN.sub(expand, pattern)
    return os.path.join(rec.get("WorkDir") or "", path) if not os.path.isabs(path) else path


def array_task_count(environ):
    """Tasks in this array: Slurm's SLURM_ARRAY_TASK_COUNT, else its min/max/step, else
    SGE's SGE_TASK_FIRST/LAST/STEPSIZE ("undefined" outside arrays); None when unknown."""
    count = environ.get("SLURM_ARRAY_TASK_COUNT", "")
    if count.isdigit():
        return int(count)
    for lo_name, hi_name, step_name in (
            ("SLURM_ARRAY_TASK_MIN", "SLURM_ARRAY_TASK_MAX", "SLURM_ARRAY_TASK_STEP"),
            ("SGE_TASK_FIRST", "SGE_TASK_LAST", "SGE_TASK_STEPSIZE")):
        lo, hi = environ.get(lo_name, ""), environ.get(hi_name, "")
        step = environ.get(step_name, "1")
        if lo.isdigit() and hi.isdigit():
            return (int(hi) - int(lo)) // max(1, int(step) if step.isdigit() else 1) + 1
    return None


def array_task_ids(environ):
    """The ids of this Slurm array's tasks, from SLURM_ARRAY_TASK_MIN/MAX/STEP; None when
    they do not describe it (1,3,7-9: the count says more tasks than the range has)."""
    lo, hi = environ.get("SLURM_ARRAY_TASK_MIN", ""), environ.get("SLURM_ARRAY_TASK_MAX", "")
    step = environ.get("SLURM_ARRAY_TASK_STEP", "1")
    if not (lo.isdigit() and hi.isdigit()):
        return None
    ids = [str(i) for i in range(int(lo), int(hi) + 1, max(1, int(step) if step.isdigit() else 1))]
    return ids if len(ids) == (array_task_count(environ) or len(ids)) else None


# ---- Grid Engine (Son of Grid Engine 8.1.9 as observed) ----

def parse_sge_duration(text):
    """SGE time values: '30', '0:0:30', '00:01:30', '1:00:00:00' (d:h:m:s) -> seconds;
    None for INFINITY or anything else."""
    parts = (text or "").strip().split(":")
    if not parts or len(parts) > 4 or not all(p.isdigit() for p in parts):
        return None
    seconds = 0
    for part, unit in zip(reversed(parts), (1, 60, 3600, 86400)):
        seconds += int(part) * unit
    return float(seconds)


def format_hms(seconds):
    """Seconds -> 'HH:MM:SS', SGE's own notation for run-time limits."""
    s = int(round(seconds or 0))
    return "%02d:%02d:%02d" % (s // 3600, s % 3600 // 60, s % 60)


def parse_sge_job(text):
    """`qstat -j ID` -> {field: value} of the first job ("" or None -> {}). Lines are
    'field:   value'; per-task lines ('usage    1:  ...') keep their task in the key."""
    rec = {}
    for line in (text or "").splitlines():
        m = re.match(r"^([A-Za-z_][\w -]*?(?:\s+\d+)?):\s+(.*)$", line)
        if m:
            rec.setdefault(re.sub(r"\s+", " ", m.group(1).strip()), m.group(2).strip())
    return rec


def sge_limits(text):
    """Run-time limits from 'h_rt=30,s_rt=20' (qstat -j's hard resource_list) or from
    qacct's category ('-l h_rt=60,s_rt=8 -notify') -> {"h_rt": s, "s_rt": s} (known ones)."""
    limits = {}
    for name, value in re.findall(r"\b([hs]_rt)=([\d:]+)", text or ""):
        seconds = parse_sge_duration(value)
        if seconds is not None:
            limits[name] = seconds
    return limits


def parse_qacct(text):
    """`qacct -j ID` -> one dict per record (an array gives one per task), in order."""
    records = []
    for block in re.split(r"^=+\s*$", text or "", flags=re.M):
        rec = {}
        for line in block.splitlines():
            key, _, value = line.strip().partition(" ")
            if key:
                rec[key] = value.strip()
        if rec.get("jobnumber"):
            records.append(rec)
    return records


def parse_sge_listing(text, job_id, task_id=None):
    """`qstat` (the job list) -> (state letters, start epoch or None) of the job, or of its
    task; (None, None) when the job is not listed. Columns: job-ID prior name user state
    submit/start-date time queue slots ja-task-ID."""
    for line in (text or "").splitlines():
        cols = line.split()
        if len(cols) < 7 or cols[0] != str(job_id):
            continue
        if task_id is not None and cols[-1] != str(task_id):
            continue
        try:
            start = time.mktime(time.strptime(cols[5] + " " + cols[6], "%m/%d/%Y %H:%M:%S"))
        except ValueError:
            start = None
        return cols[4], start
    return None, None


def same_submission(records, submitted_at=None):
    """qacct -j N lists every job ever numbered N (ids wrap; a reinstalled cell counts from
    1 again): keep the records of the submission watch saw queued, else of the latest one."""
    if not records:
        return records
    def stamp(rec):
        return " ".join((rec.get("qsub_time") or "").split())
    seen = [r for r in records if submitted_at and stamp(r) == " ".join(submitted_at.split())]
    latest = stamp(max(records, key=lambda r: _sge_time(r.get("qsub_time")) or 0))
    return seen or [r for r in records if stamp(r) == latest]


def _sge_time(text):
    """qacct's 'Thu Dec  3 08:39:38 2026' (local time) -> epoch; None if unreadable."""
    try:
        return time.mktime(time.strptime((text or "").strip(), "%a %b %d %H:%M:%S %Y"))
    except ValueError:
        return None



def _sge_margin(limit_s):
    """How early a signal still counts as 'at the limit': SGE checks limits every few
    seconds, and the wrapper starts after the job does; never more than WALLTIME_MARGIN_S."""
    return min(WALLTIME_MARGIN_S, max(2.0, 0.1 * limit_s))


def sge_signal_reason(name, elapsed, limits, state=None):
    """Why SGE sent this signal. -> (reason or None, evidence). SIGUSR1 is the soft run-time
    limit (s_rt; with -notify also the notice before a suspension); SIGUSR2 comes only with
    -notify, the queue's `notify` time before a SIGKILL: h_rt, or qdel (state 'd').
    limits: {"s_rt", "h_rt"} as far as the job has them; None when they could not be read."""
    took = format_duration(elapsed)
    known = limits is not None
    limits = limits or {}
    if name == "SIGUSR1":
        s_rt = limits.get("s_rt")
        if s_rt is None and not known:
            return "walltime", "SIGUSR1 from SGE after %s: its soft run-time limit (s_rt; " \
                               "the limit itself could not be read)" % took
        if s_rt is None:
            return None, "SIGUSR1 after %s; the job has no s_rt: a suspend notice " \
                         "(-notify) or a signal sent by hand" % took
        if elapsed >= s_rt - _sge_margin(s_rt):
            return "walltime", "s_rt %s reached (SIGUSR1 after %s)" % (format_hms(s_rt), took)
        return None, "SIGUSR1 after %s, before s_rt %s: SGE's notice of a suspension " \
                     "(-notify)" % (took, format_hms(s_rt))
    h_rt = limits.get("h_rt")
    if h_rt is not None and elapsed >= h_rt - _sge_margin(h_rt):
        return "walltime", "h_rt %s reached (SIGUSR2 from -notify after %s; SIGKILL follows)" % (
            format_hms(h_rt), took)
    if state and "d" in state:
        return "cancelled", "qdel: qstat shows state %s (SIGUSR2 from -notify after %s; " \
                            "SIGKILL follows)" % (state, took)
    if h_rt is not None:
        return "cancelled", "SIGUSR2 from -notify after %s, before h_rt %s: qdel" % (
            took, format_hms(h_rt))
    return None, "SIGUSR2 from -notify after %s (no h_rt; qstat did not say why)" % took


def sge_facts(rec):
    """The classifier's facts for a finished SGE job, from its qacct record."""
    failed_text = " ".join(rec.get("failed", "0").split())
    failed = int(failed_text.split()[0]) if failed_text.split()[:1] and failed_text.split()[0].isdigit() else 0
    status_text = " ".join(rec.get("exit_status", "").split())
    status = int(status_text.split()[0]) if status_text.split()[:1] and status_text.split()[0].isdigit() else None
    sig = status - 128 if status is not None and 128 < status < 160 else None
    facts = {"scheduler_state": "failed %d" % failed if failed else "finished",
             "exit_code": -sig if sig else status}
    limits = sge_limits(rec.get("category"))
    wall = parse_sge_duration((rec.get("ru_wallclock") or "").rstrip("s").split(".")[0])
    evidence = "qacct: failed %s, exit_status %s, ru_wallclock %s" % (
        failed_text, status_text or "?", rec.get("ru_wallclock") or "?")
    h_rt, s_rt = limits.get("h_rt"), limits.get("s_rt")
    if h_rt is not None and wall is not None and (failed == 37 or sig == 9) \
            and wall >= h_rt - _sge_margin(h_rt):
        facts.update(scheduler_reason="walltime",
                     scheduler_evidence="h_rt %s reached; %s" % (format_hms(h_rt), evidence))
    elif s_rt is not None and sig == 10 and wall is not None and wall >= s_rt - _sge_margin(s_rt):
        facts.update(scheduler_reason="walltime",
                     scheduler_evidence="s_rt %s reached (died of SIGUSR1); %s" % (format_hms(s_rt), evidence))
    elif failed or sig:
        facts["scheduler_evidence"] = evidence
    return facts


def _query_id(sched):
    """The id the scheduler's commands take for this job (an array task's own id). Slurm:
    ARRAYID_TASK, since the task whose SLURM_JOB_ID equals the array's id would otherwise
    name the whole array (`scontrol requeue 70` requeues every task)."""
    if sched.get("kind") == "slurm":
        if sched.get("array_job_id") and sched.get("array_task_id") is not None:
            return "%s_%s" % (sched["array_job_id"], sched["array_task_id"])
        return sched.get("job_id") or ""
    if sched.get("kind") == "lsf" and sched.get("array_task_id"):
        return "%s[%s]" % (sched["job_id"], sched["array_task_id"])
    return sched.get("job_id") or ""


# ==== Pure core: requeue by cause ====

def parse_requeue_causes(text):
    """--requeue's comma-separated names -> the causes, in REQUEUE_CAUSES order; "all": the
    three, "none": none (a config file's requeue switched off for one job). ConfigError names
    the first unknown name."""
    names = [n.strip().lower() for n in str(text).split(",") if n.strip()]
    for name in names:
        if name not in REQUEUE_CAUSES and name not in ("all", "none"):
            raise ConfigError("unknown requeue cause %r (known: %s, all, none)"
                              % (name, ", ".join(REQUEUE_CAUSES)))
    return [c for c in REQUEUE_CAUSES if c in names or "all" in names]


def requeue_cause(cls):
    """The --requeue cause a verdict class belongs to (preempted, walltime, hardware) or None."""
    for cause, classes in REQUEUE_CAUSES.items():
        if cls in classes:
            return cause
    return None


def requeue_budget(cause, earlier, max_requeues, unrecorded=0):
    """(requeues already spent from the cause's budget, its cap). Preemptions count apart:
    the site took the allocation, the job did nothing wrong. earlier: the earlier attempts'
    requeue records, in order; a requeue whose command did not answer ("uncertain") may
    still have been carried out, so it counts. unrecorded: earlier attempts the scheduler's
    restart count or the chain shows and no record does: their cause is unknown, so they
    count against every budget (a budget must not reset with a node-local --log-dir)."""
    preempted = cause == "preempted"
    spent = sum(1 for a in earlier if a.get("action") and a.get("state") in ("done", "uncertain")
                and (a.get("cause") == "preempted") == preempted)
    return spent + unrecorded, PREEMPT_REQUEUES_MAX if preempted else max_requeues


#: Classes a plain requeue may cure (the cause was outside the program); any other class
#: fails again the same way until something is changed.
REQUEUE_CLASSES = frozenset(("preempted", "interrupted", "nccl"))


def decide_requeue(cls, asked, earlier, max_requeues, kind, unrecorded=0):
    """What to do now that an attempt ended with verdict class `cls` (None: success).
    asked: --requeue's causes; kind: the scheduler's kind ("" outside one); unrecorded: see
    requeue_budget. -> a RequeueDecision, or None when --requeue is off or the attempt
    succeeded."""
    if not asked or cls is None:
        return None
    if cls in NEVER_REQUEUED:
        return RequeueDecision(None, None, "%s: not requeued (%s)" % (cls, NEVER_REQUEUED[cls]), None)
    cause = requeue_cause(cls)
    if cause is None:  # a requeue by hand may cure some (an NCCL timeout): Resubmit offers it
        why = "a requeue by hand may cure it" if cls in REQUEUE_CLASSES else "a rerun may well fail the same way"
        return RequeueDecision(None, None, "%s: not requeued (not a cause --requeue covers: %s)"
                               % (cls, why), None)
    if cause not in asked:
        return RequeueDecision(None, cause, "%s: not requeued (--requeue %s leaves %s out)"
                               % (cls, ",".join(asked), cause), None)
    spent, cap = requeue_budget(cause, earlier, max_requeues, unrecorded)
    what = "preemption requeue budget" if cause == "preempted" else "requeue budget"
    if spent >= cap:
        unseen = "; %d earlier attempt%s with no run record here count as spent" % (
            unrecorded, "" if unrecorded == 1 else "s") if unrecorded else ""
        return RequeueDecision(None, cause, "%s used (%d of %d%s): not requeued"
                               % (what, spent, cap, unseen), (spent, cap))
    if kind not in HARDWARE_ACTION:
        return RequeueDecision(None, cause, REQUEUE_UNAVAILABLE.get(kind, REQUEUE_OUTSIDE), (spent, cap))
    return RequeueDecision(HARDWARE_ACTION[kind] if cause == "hardware" else "requeue", cause,
                           None, (spent + 1, cap))


#: The schedulers --requeue works with, and how each leaves out a faulty node: Slurm refuses
#: ExcNodeList for a running job (so: its batch script again, without the node); SGE's qalter
#: takes `hostname=!NODE` for a running job, and `qmod -rj` reruns it under the new list.
HARDWARE_ACTION = {"slurm": "resubmit", "sge": "requeue"}
#: The end of a requeue's words when its command did not answer: state "uncertain".
UNANSWERED = "; a busy controller may still carry it out, so the budget counts it"
REQUEUE_OUTSIDE = ("not requeued: not in a batch job, so nothing could be requeued (gpualert "
                   "never reruns a command by itself)")
REQUEUE_UNAVAILABLE = {
    "pbs": "not requeued: PBS requeue is not available in gpualert",
    "lsf": "not requeued: LSF requeue is not available in gpualert"}


def gpu_fault_evidence(gpu):
    """What nvidia-smi showed of a GPU fault, which no line a job prints can fake: uncorrected
    ECC errors counted during the run, or a GPU that answered at the start and not at the
    end (GpuSampler's "lost"). None when it showed none (or never answered)."""
    gpu = gpu or {}
    if _count(gpu, "ecc_delta") > 0:
        return "nvidia-smi: uncorrected ECC errors +%d during the run" % gpu["ecc_delta"]
    return "nvidia-smi: %s" % gpu["lost"] if gpu.get("lost") else None


def attempt_checkpoint(record):
    """The checkpoint an attempt's run record (run.json's dict) names: the checkpoint fact
    (newest_checkpoint: written during that attempt), {"path", "mtime", "size"}, or None.
    The one place --requeue reads it, so how checkpoints are found can change under it."""
    ckpt = ((record or {}).get("metrics") or {}).get("checkpoint")
    return ckpt if isinstance(ckpt, dict) and ckpt.get("path") else None


def resume_checkpoint(records):
    """The newest checkpoint any of the attempts' run records names, with the "attempt" and
    "host" that recorded it (GPUALERT_RESUME once resume_refusal agrees), or None."""
    found = [dict(c, attempt=(r.get("requeue") or {}).get("attempt"), host=r.get("host"))
             for r, c in ((r, attempt_checkpoint(r)) for r in records) if c]
    return max(found, key=lambda c: c.get("mtime") or 0) if found else None


def attempt_summary(record):
    """One attempt, as the next attempts and the final message list it (from run.json's dict)."""
    req, ckpt = record.get("requeue") or {}, attempt_checkpoint(record)
    sched = record.get("scheduler") or {}
    return {"attempt": req.get("attempt"), "job": sched.get("label") or sched.get("job_id"),
            "status": record.get("status"), "cls": record.get("class"), "cause": req.get("cause"),
            "action": req.get("action"), "state": req.get("state"), "node": req.get("node") or record.get("host"),
            "start": record.get("start"), "duration_s": record.get("duration_s"),
            "checkpoint": ckpt["path"] if ckpt else None, "checkpoint_mtime": ckpt.get("mtime") if ckpt else None,
            "exclude": list(req.get("exclude") or []), "thread": list(req.get("thread") or [])}


def requeue_subject(req, cls):
    """The subject's words after the job: 'requeued, resumes from step_3000.pt',
    'gpu_hardware on gpu17: requeued as job 4250 without gpu17', 'requeue budget used (3 of
    3): not requeued'."""
    state, resume = req.get("state"), req.get("next_resume")
    # its folder too: "checkpoint-6" alone does not say whose (ck-A/ or ck-B/, run1/ or run2/)
    resume_text = "resumes from %s" % "/".join(resume.rstrip("/").split("/")[-2:]) if resume \
        else "no checkpoint to resume from"
    if req.get("cause") == "hardware" and state not in ("done", "dry-run") and req.get("reason"):
        return "%s on %s: %s" % (cls, req.get("node") or "?", req["reason"])  # the fault, still said
    if req.get("cause") == "hardware" and state in ("done", "dry-run"):
        node = req.get("node") or "?"
        job = "as job %s " % req["new_job"] if req.get("new_job") else ""
        done = "requeued %swithout %s" % (job, node) if state == "done" else \
            "would be requeued without %s (dry run)" % node
        return "%s on %s: %s, %s" % (cls, node, done, resume_text)
    if req.get("action") == "requeue" and state in ("done", "dry-run"):
        return ("requeued, " if state == "done" else "would be requeued (dry run), ") + resume_text
    return req.get("reason") or "not requeued"


def requeue_rows(result):
    """The message's Requeue, Attempts and Time lost rows, when --requeue was asked."""
    req = result.requeue
    if not req:
        return []
    rows = []
    if result.status not in ("SUCCESS", "TEST"):
        rows.append(("Requeue", requeue_detail(req, _classification(result).cls)))
    earlier = list(req.get("earlier") or [])
    final = req.get("state") not in ("done", "dry-run")
    if earlier or (final and req.get("attempt", 1) > 1):
        ckpt = attempt_checkpoint({"metrics": result.metrics}) or {}
        now = {"attempt": req.get("attempt"), "status": result.status, "start": result.start,
               "cls": _classification(result).cls, "node": req.get("node") or result.host,
               "duration_s": _duration_s(result), "checkpoint": ckpt.get("path"),
               "checkpoint_mtime": ckpt.get("mtime")}
        rows.append(("Attempts", "; ".join(_attempt_text(a) for a in earlier + [now])))
        rows.append(("Time lost", time_lost_text(earlier + [now])))
    return rows


def time_lost_text(attempts):
    """What the failed attempts cost: the work each did after its last checkpoint (all of
    it without one), which the next attempt redoes, and the time in the queue between one
    attempt's end and the next one's start. An attempt's run time before its checkpoint is
    not lost: the next attempt resumes from there."""
    redone, queued, failed = 0.0, 0.0, 0
    for a, after in zip(attempts, attempts[1:] + [None]):
        start, took = a.get("start"), a.get("duration_s")
        end = start + took if isinstance(start, (int, float)) and isinstance(took, (int, float)) else None
        if a.get("status") != "SUCCESS":  # a requeued one's too
            failed += 1
            saved = a.get("checkpoint_mtime")
            redone += end - saved if end and isinstance(saved, (int, float)) and start <= saved <= end \
                else took or 0
        if end and after and isinstance(after.get("start"), (int, float)):
            queued += max(0.0, after["start"] - end)
    return "%s (work redone: %s in %d failed attempt%s; waiting in the queue: %s)" % (
        format_duration(redone + queued), format_duration(redone), failed, "" if failed == 1 else "s",
        format_duration(queued))


def requeue_detail(req, cls):
    """The Requeue row: what was done and why, or why not, with Slurm's own words."""
    text = requeue_subject(req, cls)
    if req.get("command") and req.get("state") in ("done", "dry-run"):
        text += " (%s%s)" % ("" if req["state"] == "done" else "would run: ", req["command"])
    if req.get("budget") and req.get("state") in ("done", "dry-run"):  # a refusal spent none
        text += "; %s budget: %d of %d" % ("preemption" if req.get("cause") == "preempted"
                                           else "requeue", req["budget"][0], req["budget"][1])
    if req.get("refused"):
        text += "; %s" % req["refused"]
    return text


def _attempt_text(attempt):
    """'1: preempted on vm after 12m, step_3000.pt' for the Attempts row."""
    text = "%s: %s" % (attempt.get("attempt") or "?", (attempt.get("cls") or attempt.get("status") or "?").lower()
                       if attempt.get("status") != "SUCCESS" else "success")
    if attempt.get("node"):
        text += " on %s" % attempt["node"]
    if attempt.get("duration_s") is not None:
        text += " after %s" % format_duration(attempt["duration_s"])
    if attempt.get("checkpoint"):
        text += ", %s" % os.path.basename(attempt["checkpoint"])
    return text


#: scontrol show job's field -> sbatch's option, for each that a user sets at submission and
#: scontrol shows as sbatch takes it (Slurm 22.05 to 25.11). What scontrol does not show comes
#: back another way: an #SBATCH line with the script (sbatch reads them again); --signal from
#: the submit line (submitted_signal, as the made-up field Signal); --export and --open-mode
#: are set anew; --dependency and --begin were met when the job ran, --hold is not wanted.
SBATCH_FROM_SCONTROL = (
    ("JobName", "--job-name"), ("Partition", "--partition"), ("Account", "--account"),
    ("QOS", "--qos"), ("WCKey", "--wckey"), ("Reservation", "--reservation"),
    ("WorkDir", "--chdir"), ("StdOut", "--output"), ("StdErr", "--error"), ("StdIn", "--input"),
    ("NumTasks", "--ntasks"), ("Features", "--constraint"), ("Prefer", "--prefer"),
    ("ReqNodeList", "--nodelist"), ("Licenses", "--licenses"), ("Network", "--network"),
    ("MinTmpDiskNode", "--tmp"), ("Socks/Node", "--sockets-per-node"),
    ("NtasksPerTRES", "--ntasks-per-gpu"), ("TimeMin", "--time-min"), ("Deadline", "--deadline"),
    ("Comment", "--comment"), ("MailUser", "--mail-user"), ("MailType", "--mail-type"),
    ("Signal", "--signal"))
#: The GPUs of a job, in the TRES scontrol shows (gres:gpu:2, 23.11 on gres/gpu:2).
SBATCH_GPU_FROM_SCONTROL = (
    ("TresPerJob", "--gpus"), ("TresPerTask", "--gpus-per-task"),
    ("TresPerSocket", "--gpus-per-socket"), ("CpusPerTres", "--cpus-per-gpu"),
    ("MemPerTres", "--mem-per-gpu"))
_SLURM_EXCLUSIVE = {"NO": "--exclusive", "USER": "--exclusive=user", "MCS": "--exclusive=mcs",
                    "TOPO": "--exclusive=topo", "YES": "--oversubscribe"}  # OverSubscribe=OK: none


def resubmit_argv(rec, script, exclude, job_ids):
    """sbatch's command line for a resubmission of the job scontrol showed as `rec`: its own
    options (sbatch_options), the nodes in `exclude` left out, its output appended to the
    first attempt's file, and the chain of job ids exported for the next attempt's records
    and thread."""
    argv = ["sbatch", "--parsable", "--exclude=%s" % ",".join(exclude),
            "--export=ALL,%s=%s" % (REQUEUED_FROM_ENV, ":".join(job_ids)), "--open-mode=append"]
    return argv + sbatch_options(rec) + [script]


def _shown(value):
    return value and value not in ("(null)", "N/A", "None", "*", "/dev/null", "0", "Unknown")


def sbatch_options(rec):
    """The options a user set at submission, as scontrol shows them in rec (see
    SBATCH_FROM_SCONTROL), less those sbatch refuses together with another one shown."""
    argv = ["%s=%s" % (flag, rec[key]) for key, flag in SBATCH_FROM_SCONTROL if _shown(rec.get(key))
            and not (key == "WCKey" and rec[key].startswith("*"))]  # *name: the default one
    per_gpu = _shown(rec.get("NtasksPerTRES"))  # sbatch: not with --gpus-per-task/socket
    for key, flag in SBATCH_GPU_FROM_SCONTROL:
        found = re.search(r"(?:^|,)gres[:/]gpu[:=]([^,]+)", rec.get(key) or "")
        if found and not (per_gpu and key in ("TresPerTask", "TresPerSocket")):
            argv.append("%s=%s" % (flag, found.group(1)))
    if _shown(rec.get("TresPerNode")):  # scontrol: gres:gpu:1 or gres/gpu:1; sbatch: gpu:1
        argv.append("--gres=%s" % re.sub(r"(^|,)gres[:/]", r"\1", rec["TresPerNode"]))
    if _shown(rec.get("CPUs/Task")) and not _shown(rec.get("CpusPerTres")):  # refused together
        argv.append("--cpus-per-task=%s" % rec["CPUs/Task"])
    per_node = (rec.get("NtasksPerN:B:S:C") or "").split(":")[0]
    if per_node.isdigit() and per_node != "0" and not per_gpu:
        argv.append("--ntasks-per-node=%s" % per_node)
    if (rec.get("ArrayTaskId") or "").isdigit():  # this task only: the script's --array would
        argv.append("--array=%s" % rec["ArrayTaskId"])  # submit the whole array again
    nodes = (rec.get("NumNodes") or "").split("-")[0]
    if nodes.isdigit():
        argv.append("--nodes=%s" % nodes)
    if parse_slurm_duration(rec.get("TimeLimit")):  # scontrol's D-HH:MM:SS, as sbatch takes it
        argv.append("--time=%s" % rec["TimeLimit"])
    mem = rec.get("MinMemoryNode") or rec.get("MinMemoryCPU")
    if mem and mem[0].isdigit() and mem.rstrip("MGKT") != "0" and not _shown(rec.get("MemPerTres")):
        argv.append("%s=%s" % ("--mem" if rec.get("MinMemoryNode") else "--mem-per-cpu", mem))
    if (rec.get("Nice") or "").isdigit() and rec["Nice"] != "0":  # below 0: an admin's, not ours
        argv.append("--nice=%s" % rec["Nice"])
    flags = (_SLURM_EXCLUSIVE.get(rec.get("OverSubscribe")),
             {"0": "--no-requeue", "1": "--requeue"}.get(rec.get("Requeue")),
             "--contiguous" if rec.get("Contiguous") == "1" else None)
    return argv + [f for f in flags if f]


def submitted_signal(submit_line, command, environ):
    """--signal as given on sbatch's command line (the submit line, up to the script's name),
    else in SBATCH_SIGNAL (the submission's environment, exported into the job); None when
    neither: an #SBATCH --signal line comes back with the script."""
    words, script = (submit_line or "").split(), os.path.basename(command or "")
    for i, word in enumerate(words[1:], 1):
        if script and os.path.basename(word) == script:
            break
        if word.startswith("--signal="):
            return word[len("--signal="):]
        if word == "--signal" and i + 1 < len(words):
            return words[i + 1]
    return environ.get("SBATCH_SIGNAL") or None


def hostlist_items(text):
    """Slurm's 'gpu[01,03],n7' -> ['gpu[01,03]', 'n7']: its commas inside brackets kept."""
    return re.findall(r"[^,\[]+(?:\[[^\]]*\][^,\[]*)*", text or "")


def sge_requeue_refusal(rec):
    """Why SGE will not reschedule the job `qstat -j` showed as rec, or None."""
    if not rec.get("job_number"):
        return "not requeued: qstat -j did not answer"
    if rec.get("restart") == "n" or (rec.get("restart") is None and rec.get("rerun") == "n"):
        return "not requeued: the job is not rerunnable (SGE reschedules only qsub -r y jobs)"
    return None


def sge_exclude_argv(rec, exclude, job_id):
    """qalter's command line that keeps the job's hard resources and adds !NODE for each node
    in `exclude` to its hostname expression (qalter -l replaces the whole list, so it is
    given whole): the user's hostname=a|b becomes hostname=(a|b)&!NODE."""
    kept, hosts = [], []
    for r in (rec.get("hard resource_list") or "").split(","):
        name, _, value = r.partition("=")
        if name in ("h", "hostname"):
            hosts = [t for t in _sge_and_terms(value) if not (t[:1] == "!" and t[1:] in exclude)]
        elif r:
            kept.append(r)
    return ["qalter", "-l", ",".join(kept + ["hostname=%s" % "&".join(
        hosts + ["!%s" % n for n in exclude])]), job_id]


def _sge_and_terms(expression):
    """SGE's 'a*&!b&(c|d)' -> ['a*', '!b', '(c|d)']: the terms & joins outside parentheses;
    the whole in parentheses where an | outside them joins some ('a&b|c')."""
    terms, depth, start = [], 0, 0
    for i, c in enumerate(expression + "&"):
        depth += {"(": 1, ")": -1}.get(c, 0)
        if c == "|" and depth == 0:
            return ["(%s)" % expression]
        if c == "&" and depth == 0:
            terms.append(expression[start:i])
            start = i + 1
    return [t for t in terms if t]


def requeue_steps_sge(req, rec, job_id):
    """SGE's commands, in order: the exclusion (hardware) and `qmod -rj` (it ends the job)."""
    steps = [sge_exclude_argv(rec, req["exclude"], job_id)] if req.get("cause") == "hardware" else []
    return steps + [["qmod", "-rj", job_id]]


def slurm_requeue_refusal(rec, action):
    """Why Slurm will not requeue (action "requeue") or resubmit ("resubmit") the job that
    `scontrol show job` showed as rec, in words for the message; None when it will."""
    if not rec:
        return "not requeued: scontrol show job did not answer"
    if rec.get("BatchFlag") == "0":
        return ("not requeued: not a batch job (srun or salloc); Slurm requeues and resubmits "
                "batch jobs only")
    if action == "requeue" and rec.get("Requeue") == "0":
        return "not requeued: the job was submitted with --no-requeue (Requeue=0)"
    return None


# ==== Pure core: from the outcome to the result ====

def stop_signal_names(scheduler):
    """The signals that ask a job to end. USR1/USR2 only warn, except SGE's SIGUSR2: with
    -notify it comes the queue's `notify` time before the SIGKILL of h_rt or qdel."""
    if (scheduler or {}).get("kind") == "sge":
        return STOP_SIGNALS + ("SIGUSR2",)
    return STOP_SIGNALS


def _own_job_ids(scheduler):
    """The ids Slurm's end-of-job lines may give this job: its own and ARRAYID_TASK."""
    sched = scheduler or {}
    if sched.get("kind") != "slurm" or not sched.get("job_id"):
        return []
    return sorted(set([str(sched["job_id"]), _scheduler_label(sched)]))


def facts_for(outcome):
    """The classifier's facts: what the process, the cgroup, the GPUs and the scheduler say."""
    child, before, after = outcome.child, outcome.mem_before, outcome.mem_after
    stops = stop_signal_names(outcome.scheduler)
    facts = {"exit_code": child.exit_code, "timed_out": child.timed_out,
             "exec_error": child.exec_error[1] if child.exec_error else None,
             "received_signals": [name for name, _, _ in child.signals if name in stops],
             "total_lines": outcome.total_lines}
    if getattr(child, "hang", None):
        facts["hang"] = child.hang
    if (getattr(child, "warnings", None) or {}).get("passed"):
        facts["warnings_passed"] = list(child.warnings["passed"])
    if outcome.evidence:  # decisive-looking lines anywhere in the log, for what the tail lost
        facts["noted_lines"] = list(outcome.evidence)
    if before.get("oom_kill") is not None and after.get("oom_kill") is not None:
        facts["oom_kill_delta"] = after["oom_kill"] - before["oom_kill"]
    if before.get("rlimit_as"):
        facts["rlimit_as_bytes"] = before["rlimit_as"]
    if before.get("own") and after.get("limit_bytes"):  # the job's own cgroup's limit
        facts["memory_limit_bytes"] = after["limit_bytes"]
    if outcome.end_reason and outcome.end_reason[0]:
        facts["scheduler_reason"], facts["scheduler_evidence"] = outcome.end_reason
    ids = _own_job_ids(outcome.scheduler)
    if ids:  # a scheduler's line about another job is no verdict on this one
        facts["job_ids"] = ids
    if outcome.gpu.get("ecc_delta"):
        facts["ecc_delta"] = outcome.gpu["ecc_delta"]
    if isinstance(outcome.start, (int, float)) and isinstance(outcome.end, (int, float)):
        facts["elapsed_s"] = max(0.0, outcome.end - outcome.start)  # a time limit's hint says it
    return facts


def result_for(outcome, verdict):
    """The run's RunResult: the outcome, its verdict, and the notes a reader needs."""
    child, notes = outcome.child, list(outcome.notes)
    if outcome.end_reason and outcome.end_reason[0] and outcome.end_reason[1]:
        notes.append("scheduler: %s" % outcome.end_reason[1])
    own = outcome.mem_before.get("own")  # own_cgroup_kind, found by the run at its start
    if outcome.scheduler or own:
        notes += _memory_notes(outcome.mem_before, outcome.mem_after, own)
    return make_result(
        status_for(child.exit_code, verdict.cls, child.timed_out), outcome.name,
        argv=list(outcome.argv), host=outcome.host, cwd=outcome.cwd, start=outcome.start,
        end=outcome.end, exit_code=child.exit_code,
        exit_status=exit_status_for(child.exit_code, child.exec_error),
        classification=verdict._replace(detail=mask_secrets(verdict.detail),
                                        evidence=mask_secrets(verdict.evidence)),
        log_path=outcome.log_path, run_dir=outcome.run_dir, tail=tail_lines(outcome.tail),
        rusage=child.rusage, scheduler=outcome.scheduler, notes=notes, gpu=outcome.gpu,
        metrics=outcome.metrics)


def own_cgroup_kind(path, environ):
    """Is this cgroup the job's own? -> "Slurm job N", "systemd scope NAME", or None (a
    login session's, a user slice, a Slurm without task/cgroup: shared with other work)."""
    if not path:
        return None
    job = environ.get("SLURM_JOB_ID")
    if job and re.search(r"/job_%s(?:/|$)" % re.escape(job), path):
        return "Slurm job %s" % job
    leaf = path.rstrip("/").rsplit("/", 1)[-1]
    if leaf.endswith(".scope") and not leaf.startswith(("session-", "slurmstepd", "init.scope")):
        return "systemd scope %s" % leaf
    return None


def _memory_notes(before, after, own=None):
    """Cgroup figures, called the job's only when the cgroup is the job's own."""
    notes = list(after.get("notes") or [])
    if own and after.get("peak_bytes"):
        notes.append("peak memory of the job's cgroup (%s): %.1f GiB" % (own, after["peak_bytes"] / 2.0 ** 30))
    if own and after.get("cpu_usec") is not None and before.get("cpu_usec") is not None:
        notes.append("CPU time of the job's cgroup (%s): %s" % (
            own, format_duration((after["cpu_usec"] - before["cpu_usec"]) / 1e6)))
    elif not own and after.get("path"):
        notes.append("no cgroup of the job's own (%s is shared): memory and CPU figures are the "
                     "process tree's, sampled" % after["path"])
    if before.get("oom_kill") is not None and after.get("oom_kill", 0) > before["oom_kill"]:
        notes.append("the cgroup's OOM killer fired %d time(s) during the run"
                     % (after["oom_kill"] - before["oom_kill"]))
    return notes


# ==== Pure core: runs and the digest ====

# `runs`, `digest` and `prune` read the run.json of every run under --log-dir, whichever host
# wrote it (the state directory is usually on the shared home). Each record becomes one small
# summary with stable names (RUN_FIELDS): what `runs --json` prints, what the index caches and
# what the digest counts. A record from a newer gpualert is read by the fields known here.

#: The stable names of `runs --json` (an interface: add names, never rename one).
RUN_FIELDS = ("start", "end", "start_iso", "end_iso", "duration_s", "job", "job_id", "array_task",
              "name", "status", "class", "detail", "evidence", "exit_status", "signal", "host",
              "gpus", "log", "run_dir", "delivery", "rank", "requeued")
OK_STATUSES = ("SUCCESS", "COMPLETED")  # `runs --failed` and the digest count every other end
#: Classes that point at the node rather than the job. gpu_hardware always; nccl and segfault
#: only when they repeat on one node and on no other (elsewhere too: the job's own bug).
NODE_CLASSES = ("gpu_hardware",)
NODE_IF_LOCAL_CLASSES = ("nccl", "segfault")
SUSPECT_MIN_FAILURES = 2
DIGEST_EXAMPLES = 3  # evidence lines shown per suspect node


def run_summary(record, run_dir):
    """A run.json's content -> the dict of RUN_FIELDS; ValueError (saying why) when it is
    not a finished gpualert run record."""
    if not isinstance(record, dict) or not isinstance(record.get("status"), str):
        raise ValueError("not a gpualert run record (no status)")
    verdict = record.get("classification") if isinstance(record.get("classification"), dict) else {}
    sched = record.get("scheduler") if isinstance(record.get("scheduler"), dict) else {}
    gpu = record.get("gpu") if isinstance(record.get("gpu"), dict) else {}
    delivery = record.get("delivery") if isinstance(record.get("delivery"), dict) else {}
    gpus = len(gpu["gpus"]) if isinstance(gpu.get("gpus"), list) else 0
    if record.get("end") is not None and _number(record["end"]) is None:
        raise ValueError("end time %r is not a number" % _clean(record["end"], 40))
    return summary_of({
        "start": _number(record.get("start")), "end": _number(record.get("end")),
        "job": _job_label(sched) or None, "job_id": _text_or_none(sched.get("job_id")),
        "array_task": _text_or_none(sched.get("array_task_id")),
        "name": _clean(record.get("name"), 200), "status": _clean(record["status"], 20),
        "class": _text_or_none(record.get("class") or verdict.get("cls")),
        "detail": _text_or_none(verdict.get("detail")),
        "evidence": _text_or_none(verdict.get("evidence")),
        "exit_status": _integer(record.get("exit_status")),
        "signal": _text_or_none(record.get("signal_name")),
        "host": _clean(record.get("host"), 200) or None,
        "gpus": gpus if 0 < gpus <= RUN_GPUS_MAX else None,  # more is no record of one node's
        "log": _text_or_none(record.get("log_path")),
        "delivery": _text_or_none(delivery.get("outcome")), "rank": _rank_of(record.get("log_path")),
        "requeued": _requeued_cause(record.get("requeue"))},
        run_dir)


def _requeued_cause(req):
    """The --requeue cause (preempted, walltime, hardware) when this run's end requeued or
    resubmitted its job, else None: a refusal or a dry run made nothing."""
    if isinstance(req, dict) and req.get("action") and req.get("state") == "done":
        return _text_or_none(req.get("cause")) or "requeued"
    return None


#: What a run summary holds as it is (the index caches these); the rest is derived from them.
RUN_STORED_FIELDS = ("start", "end", "job", "job_id", "array_task", "name", "status", "class",
                     "detail", "evidence", "exit_status", "signal", "host", "gpus", "log",
                     "delivery", "rank", "requeued")
_RUN_STORED_SET = frozenset(RUN_STORED_FIELDS)
_RUN_TEXT_FIELDS = ("job", "job_id", "array_task", "name", "class", "detail", "evidence", "signal",
                    "host", "log", "delivery", "requeued")
RUN_GPUS_MAX = 64
CLOCK_SKEW_S = 300.0  # a record's time this far ahead of ours comes from a clock that is wrong
RUN_EPOCH_MAX = 253402300799.0  # 9999-12-31: any later time cannot be shown as a date


def summary_of(stored, run_dir):
    """The RUN_STORED_FIELDS of a run (fresh from its run.json or cached by the index: both
    are checked here, alike) -> its full summary, the times shown in this host's zone.
    ValueError saying why when a field has a type or value no record of a run can have."""
    if not isinstance(stored, dict) or not stored.keys() >= _RUN_STORED_SET:
        raise ValueError("not a gpualert run record (fields missing)")
    start, end = stored["start"], stored["end"]
    if _number(start) is None:
        raise ValueError("not a gpualert run record (no start time)")
    for when in (start, end):
        if when is not None and not (_number(when) is not None and 0 <= when <= RUN_EPOCH_MAX):
            raise ValueError("time %r out of range" % (when,))
    if end is not None and end < start:
        raise ValueError("ends before it starts")
    if not stored["status"] or not isinstance(stored["status"], str):
        raise ValueError("not a gpualert run record (no status)")
    for f in _RUN_TEXT_FIELDS:
        if not isinstance(stored[f], (str, type(None))):
            raise ValueError("%s is not text" % f)
    for f in ("exit_status", "gpus", "rank"):
        if stored[f] is not None and _integer(stored[f]) is None:
            raise ValueError("%s is not a whole number" % f)
    if stored["gpus"] is not None and not 0 < stored["gpus"] <= RUN_GPUS_MAX:
        raise ValueError("gpus out of range")
    out = {f: stored[f] for f in RUN_STORED_FIELDS}
    out.update(start=float(start), end=float(end) if end else None, start_iso=iso_time(start),
               end_iso=iso_time(end) if end else None, run_dir=run_dir,
               duration_s=round(end - start, 3) if end else None)
    return out


def _rank_of(log_path):
    """The rank of a record that one rank's wrapper wrote (its log is output.rankN.log)."""
    m = re.search(r"output\.rank(\d+)\.log$", str(log_path or ""))
    return int(m.group(1)) if m else None


def _number(value):
    """A finite number (not a bool, not inf or nan) as a float, else None."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        try:
            value = float(value)
        except OverflowError:  # an int with 400 digits
            return None
        return value if value - value == 0 else None
    return None


def _integer(value):
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _text_or_none(value):
    return _clean(value, 2000) or None if value is not None else None


def run_failed(run):
    return counted_status(run["status"], run["class"]) not in OK_STATUSES


def counted_status(status, cls):
    """The status a run counts as in `runs --failed`, the digest and an array's summary: its
    own, but a run that exited 0 after its loss diverged (COMPLETED nan_loss) failed."""
    return "FAILED" if status in OK_STATUSES and cls == "nan_loss" else status


def select_runs(runs, now, since_s=None, *, failed=False, node=None, job=None):
    """The runs that pass the filters, newest first (by end, else start). A --since window
    ends at now (give or take CLOCK_SKEW_S): a run dated in the future is in none."""
    def on_node(run):
        host = run["host"] or ""
        return host == node or host.split(".")[0] == node.split(".")[0]
    out = [r for r in runs if (since_s is None or now - since_s <= run_when(r) <= now + CLOCK_SKEW_S)
           and (not failed or run_failed(r)) and (node is None or on_node(r))
           and (job is None or job in (r["job"], r["job_id"], re.split(r"[_.]", r["job"] or "")[0]))]
    return sorted(out, key=lambda r: (run_when(r), r["run_dir"] or ""), reverse=True)


def run_when(run):
    return run["end"] or run["start"]


def future_runs(runs, now):
    """The runs whose time is ahead of `now` (the clock of the host that wrote them is
    wrong): no --since window holds them, or every digest would count them again."""
    return [r for r in runs if run_when(r) > now + CLOCK_SKEW_S]


_RUN_LINE = "%-16s  %-10s %-14s %-11s %-25s %6s  %s"  # 100 columns at most (`runs --json`: the log)
RUNS_HEADER = (_RUN_LINE % ("ENDED", "JOB", "NAME", "STATUS", "CAUSE", "TIME", "NODE")).rstrip()


def run_line(run):
    """One line of `runs` (RUNS_HEADER): when, job, name, status, class: detail, duration, node."""
    what = run["class"] or "-"
    if run["detail"] and run_failed(run):
        what += ": " + run["detail"]
    when = time.strftime("%Y-%m-%d %H:%M", time.localtime(run["end"] or run["start"]))
    return _RUN_LINE % (
        when, _clean(run["job"] or "-", 10), _clean(run["name"] or "-", 14), _clean(run["status"], 11),
        _clean(what, 25), format_duration(run["duration_s"]), _clean(run["host"] or "?", 10))


def make_digest(runs, now, since_s, undelivered=0):
    """The digest as one value (every rendering reads it): counts, groups with their newest
    example, time lost, nodes with failures (suspects flagged), the undelivered count.
    runs: summaries, newest first (select_runs). A job's rank 0 stands for its other ranks'
    records in the counts (with `srun gpualert.py` every rank keeps one); the nodes are every
    failed record's own."""
    nodes = failing_nodes([r for r in runs if run_failed(r)])
    leaders = set(r["job"] for r in runs if r["job"] and not r["rank"])
    runs = [r for r in runs if not r["rank"] or r["job"] not in leaders]
    failed = [r for r in runs if run_failed(r)]
    groups = collections.OrderedDict()
    for r in runs:  # newest first: a group's first run is its newest example
        groups.setdefault((r["status"], r["class"]), []).append(r)
    order = sorted(groups, key=lambda k: (not run_failed(groups[k][0]), STATUSES.index(k[0]) if k[0] in STATUSES else 0,
                                          -len(groups[k])))
    lost = sum(r["duration_s"] or 0.0 for r in failed)
    known = [r for r in failed if r["gpus"] and r["duration_s"]]
    return {"since_s": since_s, "from": now - since_s, "to": now, "runs": len(runs),
            "failed": len(failed), "hosts": len(set(r["host"] for r in runs)),
            "classes": _count_by(failed, "class"),
            "groups": [{"status": k[0], "class": k[1], "count": len(groups[k]), "newest": groups[k][0]}
                       for k in order],
            "lost_s": lost, "gpu_hours": sum(r["duration_s"] * r["gpus"] for r in known) / 3600.0,
            "gpu_runs": len(known), "nodes": nodes, "undelivered": undelivered,
            "requeues": _count_by(runs, "requeued")}


def _count_by(runs, key):
    """[(value, count)] most first, then by name; runs without the value are left out."""
    counts = {}
    for r in runs:
        if r.get(key):
            counts[r[key]] = counts.get(r[key], 0) + 1
    return sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))


def failing_nodes(failed):
    """Each node with failures, most first: {"host", "failures", "classes", "suspect",
    "hardware": the runs that count against the node, newest first}. A node is suspect
    with SUSPECT_MIN_FAILURES such runs (NODE_CLASSES; NODE_IF_LOCAL_CLASSES when they
    repeat on this node and on no other)."""
    by_host = collections.OrderedDict()
    for r in failed:
        by_host.setdefault(r["host"] or "?", []).append(r)
    hosts_of = {}
    for r in failed:
        hosts_of.setdefault(r["class"], set()).add(r["host"] or "?")
    nodes = []
    for host, rs in by_host.items():
        local = [c for c in NODE_IF_LOCAL_CLASSES if hosts_of.get(c) == set([host])
                 and sum(1 for r in rs if r["class"] == c) >= SUSPECT_MIN_FAILURES]
        hardware = [r for r in rs if r["class"] in NODE_CLASSES or r["class"] in local]
        nodes.append({"host": host, "failures": len(rs), "classes": _count_by(rs, "class"),
                      "suspect": len(hardware) >= SUSPECT_MIN_FAILURES, "hardware": hardware})
    return sorted(nodes, key=lambda n: (not n["suspect"], -n["failures"], n["host"]))


def digest_subject(digest):
    """'[gpualert] digest: 12 runs, 4 failed (cuda_oom 2, gpu_hardware 2)', suspects last."""
    text = "[gpualert] digest: %d run%s, %d failed" % (
        digest["runs"], "" if digest["runs"] == 1 else "s", digest["failed"])
    if digest["classes"]:
        text += " (%s)" % ", ".join("%s %d" % kv for kv in digest["classes"])
    suspects = [n["host"] for n in digest["nodes"] if n["suspect"]]
    if suspects:
        text += "; suspect node%s %s" % ("" if len(suspects) == 1 else "s", " ".join(suspects))
    return _clean(text, SUBJECT_MAX_CHARS)


def digest_sections(digest):
    """What the digest says, once: [(heading, [(headline, [detail lines], alarm)])]; the text
    and the HTML part both render this."""
    span = "%s to %s" % (_format_time(digest["from"]), _format_time(digest["to"]))
    runs = [("%d run%s, %d failed, on %d host%s" % (
        digest["runs"], "" if digest["runs"] == 1 else "s", digest["failed"], digest["hosts"],
        "" if digest["hosts"] == 1 else "s"), [span], False)]
    for g in digest["groups"]:
        runs.append(("%d %s%s" % (g["count"], g["status"], ": " + g["class"] if g["class"] else ""),
                     _example_lines(g["newest"], g["count"]), False))
    sections = [("Runs", runs), ("Time lost to failures", [(_lost_line(digest), [], False)])]
    if digest["nodes"]:
        sections.append(("Nodes with failures", [_node_item(n) for n in digest["nodes"]]))
    made = sum(n for _, n in digest["requeues"])
    sections.append(("Requeues (--requeue)", [(
        "%d made (%s)" % (made, ", ".join("%s %d" % kv for kv in digest["requeues"])) if made
        else "none made", [], False)]))
    outbox = "%d message%s not delivered yet (they wait in the outbox: gpualert.py resend)" % (
        digest["undelivered"], "" if digest["undelivered"] == 1 else "s")
    sections.append(("Outbox", [(outbox if digest["undelivered"] else "nothing waiting", [],
                                 bool(digest["undelivered"]))]))
    return sections


def _example_lines(run, count):
    where = "job %s %s" % (run["job"], run["name"]) if run["job"] else run["name"] or "?"
    lines = ["%s%s on %s, ended %s after %s" % ("newest: " if count > 1 else "", where,
                                                 run["host"] or "?", _format_time(run["end"]),
                                                 format_duration(run["duration_s"]))]
    if run["detail"] and run_failed(run):
        lines.append(run["detail"])
    lines.append("log: %s" % (run["log"] or run["run_dir"] or "-"))
    return [_clean(line, 500) for line in lines]


def _lost_line(digest):
    if not digest["failed"]:
        return "none: no run failed"
    text = "%s of wall time in %d failed run%s" % (
        format_duration(digest["lost_s"]), digest["failed"], "" if digest["failed"] == 1 else "s")
    if digest["gpu_runs"]:
        text += "; %.1f GPU-hours in the %d whose GPU count is known" % (
            digest["gpu_hours"], digest["gpu_runs"])
    else:
        text += "; GPU-hours unknown (no GPU count recorded)"
    return text


def _node_item(node):
    counts = ", ".join("%s %d" % kv for kv in node["classes"]) or "no class"
    head = "%s: %d failure%s (%s)" % (node["host"], node["failures"],
                                      "" if node["failures"] == 1 else "s", counts)
    if not node["suspect"]:
        return head, [], False
    lines = ["SUSPECT: %d failures that point at the node; resubmit with --exclude=%s and tell "
             "the admins" % (len(node["hardware"]), node["host"])]
    for r in node["hardware"][:DIGEST_EXAMPLES]:
        lines.append(_clean("%s %s: %s" % (_format_time(r["end"]), "job %s" % r["job"] if r["job"]
                                           else r["name"], r["evidence"] or r["detail"] or r["class"]), 500))
    return head + " - SUSPECT", lines, True


# ==== Pure core: rendering ====

def array_subject(summary):
    """'array 41: 30 ok, 10 failed (cuda_runtime 8, nan_loss 2)' - counts first."""
    status = summary.get("by_status") or {}
    ok = status.get("SUCCESS", 0)
    parts = ["%d ok" % ok] if ok else []
    for name, n in sorted(((k, v) for k, v in status.items() if k != "SUCCESS"),
                          key=lambda kv: (-kv[1], str(kv[0]))):
        parts.append("%d %s" % (n, str(name).lower()))
    missing = summary.get("missing") or []
    if missing:
        parts.append("%d never reported" % len(missing))
    classes = sorted((summary.get("by_class") or {}).items(), key=lambda kv: (-kv[1], kv[0]))
    text = "array %s: %s" % (summary["array_job_id"], ", ".join(parts) or "no tasks")
    if classes:
        text += " (%s)" % ", ".join("%s %d" % kv for kv in classes)
    return text


def array_task_rows(summary):
    """One row per task: (task, status, class, duration, last metric, log), then the tasks
    that never reported with the scheduler's state for them."""
    rows = []
    for e in summary.get("entries") or []:
        rows.append((str(e.get("task")), str(e.get("status") or "?"), e.get("class") or "-",
                     format_duration(e.get("duration_s")), e.get("metric") or "-",
                     e.get("log") or "-"))
    for task, state in summary.get("missing") or []:
        rows.append((str(task), "never reported", "-", "-", "-", "scheduler: %s" % state))
    return rows


def render_subject(result):
    """One filterable line whose first 50 characters tell runs apart (mailx and phones cut
    there): [gpualert] STATUS job ID name: class on host (exit|signal, duration). A success
    names its main metric's last value instead of a class."""
    if result.digest:
        return digest_subject(result.digest)
    status = _clean(result.status or "UNKNOWN", 20).upper().replace(" ", "_")
    if result.array:  # counts first: they are what tells one array's summary from another
        return _clean("[gpualert] %s %s on %s" % (status, array_subject(result.array),
                                                   _subject_word(result.host, 40) or "?"),
                      SUBJECT_MAX_CHARS)
    what = _clean(_classification(result).cls, 40).replace(" ", "_") or _subject_metric(result)
    job = _job_label(result.scheduler)
    name = _subject_word(result.name, 30) or "job"
    who = "job %s %s" % (_subject_word(job, 30), name) if job and job not in name else name
    req = result.requeue or {}
    failed = result.status not in ("SUCCESS", "TEST")
    if req.get("attempt") and (failed or req["attempt"] > 1):  # --requeue: which attempt, and
        who += " (attempt %d)" % req["attempt"]                # what was done about it
        if failed:
            what = _clean(requeue_subject(req, _classification(result).cls), 120)
    head = "[gpualert] %s %s%s" % (status, who, ": " + what if what else "")
    extra = [_exit_brief(result), format_duration(_duration_s(result))]
    return _clean("%s on %s (%s)" % (head, _subject_word(result.host, 40) or "?",
                                     ", ".join(extra)), SUBJECT_MAX_CHARS)


def _subject_word(text, limit):
    """Cleaned and cut to `limit`, each word to 40 characters: a longer word would be folded
    as an encoded word of its own, and some clients then show an empty first line."""
    words = (_clean(text, limit) or "").split(" ")
    return " ".join(_fit(w, 40, "~") for w in words)


def _subject_metric(result):
    metrics = result.metrics or {}
    if result.status not in ("SUCCESS", "COMPLETED"):
        return ""
    for name in metrics.get("main") or []:
        last = metrics["series"][name].get("last")
        if last:
            return "%s %s" % (name, format_number(last["value"]))
    return ""


def _summary_rows(result):
    """(label, value) pairs shared by the text and HTML bodies; values are one line each."""
    c = _classification(result)
    rows = [("Status", result.status)]
    if c.cls:
        rows.append(("Cause", c.cls + (" (rule %s)" % c.rule if c.rule and c.rule != c.cls else "")))
    rows += [("Command", _clean(quote_argv(result.argv or []), 2000)), ("Host", result.host),
             ("Directory", result.cwd), ("Started", _format_time(result.start)),
             ("Ended", _format_time(result.end) if result.end else "(still running)"),
             ("Duration", format_duration(_duration_s(result))), ("Exit", _exit_long(result))]
    rows += _resource_rows(result.rusage or {}, (result.scheduler or {}).get("job_id"))
    rows += _scheduler_rows(result.scheduler or {})
    if result.run_dir:
        rows.append(("Run record", os.path.join(result.run_dir, "run.json")))
    for n, line in enumerate(gpu_summary_lines(result.gpu or {})):
        rows.append(("GPU" if n == 0 else "", line))
    return [(label, _clean(value, 2000)) for label, value in rows]


def _exit_long(result):
    if result.signal_name:
        text = "killed by %s" % result.signal_name
    elif result.exit_code is not None:
        text = "exit code %d" % result.exit_code
    else:
        text = _exit_brief(result)
    if result.exit_status is not None and result.exit_status != result.exit_code:
        text += " (wrapper exit status %s)" % result.exit_status
    return text


def _resource_rows(rusage, job_id=None):
    """One memory and one CPU line for the job, each saying its source. The kernel's peak
    (ru_maxrss) starts from the wrapper's own memory at the fork: at or under it, it is the
    wrapper's figure, not the job's. A remote launcher's (srun's) figures, its process
    tree's too, are its own: the job's tasks run under slurmstepd, and Slurm counts them."""
    rows, sampled = [], rusage.get("tree_samples")
    launcher = rusage.get("launcher")
    whose = " (%s's own)" % launcher if launcher else ""
    every = "sampled every %.0f s from /proc" % float(rusage.get("tree_interval_s") or TREE_SAMPLE_S)
    theirs = ("; the job's tasks run under slurmstepd, not %s, and are not counted here: where "
              "Slurm gathers accounting, `sacct -j %s -o JobID,MaxRSS,TotalCPU` has theirs"
              % (launcher, _clean(job_id, 40) or "JOBID")) if launcher else ""
    maxrss, fork = int(rusage.get("maxrss_kib") or 0), int(rusage.get("fork_rss_kib") or 0)
    if maxrss and maxrss > fork * 1.02 + 512:
        rows.append(("Peak RSS" + whose, _format_size(maxrss * 1024) + ("" if whose else " (largest process)")))
    elif maxrss and not sampled:
        rows.append(("Peak RSS", "not measured: below the wrapper's own %s, which the kernel's "
                                 "figure starts from" % _format_size(fork * 1024)))
    if sampled:
        rows.append(("Peak memory, process tree" + whose, "%s (summed RSS, %s%s)" % (
            _format_size(int(rusage.get("tree_peak_rss_kib") or 0) * 1024), every, theirs)))
    if sampled and launcher:
        rows.append(("CPU time, process tree" + whose, "%s (%s)" % (
            format_duration(float(rusage.get("tree_cpu_s") or 0)), every)))
    elif "utime_s" in rusage or "stime_s" in rusage:
        user, system = float(rusage.get("utime_s") or 0), float(rusage.get("stime_s") or 0)
        rows.append(("CPU time" + whose, "user %.1f s, system %.1f s (%s in all)" % (
            user, system, format_duration(user + system))))
    return rows


def _scheduler_rows(sched):
    if not sched:
        return []
    parts = ["%s job %s" % (sched.get("kind") or "scheduler", _job_label(sched) or "?")]
    for key in ("job_name", "partition", "nodelist", "account", "submit_dir"):
        if sched.get(key):
            parts.append("%s %s" % (key.replace("_", " "), sched[key]))
    return [("Scheduler", ", ".join(parts))]


def gpu_summary_lines(gpu):
    """One line per GPU a person reads: peak memory, utilisation, heat, ECC; the idle flag."""
    lines = []
    for g in gpu.get("gpus") or []:
        parts = ["GPU%s %s" % (g.get("index"), g.get("name") or "")]
        if g.get("mem_used_peak_mib") is not None:
            parts.append("peak memory %.1f/%.1f GiB" % (g["mem_used_peak_mib"] / 1024.0,
                                                       (g.get("mem_total_mib") or 0) / 1024.0))
        if g.get("util_mean_pct") is not None:
            parts.append("utilisation mean %s%% max %s%%" % (g["util_mean_pct"], g.get("util_max_pct")))
        if g.get("temp_max_c") is not None:
            parts.append("max %sC" % g["temp_max_c"])
        if g.get("ecc_delta"):
            parts.append("%d NEW uncorrected ECC errors" % g["ecc_delta"])
        lines.append(", ".join(parts))
    if gpu.get("idle"):
        lines.append("the GPUs stayed at 0% utilisation for the whole run")
    if lines and gpu.get("samples"):
        lines.append("(%d nvidia-smi samples over %s)" % (gpu["samples"],
                                                          format_duration(gpu.get("duration_s"))))
    return lines


_CARET_LINE_RE = re.compile(r"^\s*[\^~]+[\s\^~]*$")


def _tail_without_noise(tail):
    """Python 3.11+'s ^^^^ marker lines go; a run of library frames (site-packages) becomes
    one line saying how many, so the frames in the user's own code stay in view."""
    out, skipped, frame_code = [], 0, False
    for line in tail or ():
        line = str(line)
        bare = strip_rank_prefix(line)
        if _CARET_LINE_RE.match(bare):
            continue
        m = _FRAME_PARTS_RE.match(bare)
        if m and _LIBRARY_PATH_RE.search(m.group(1)):
            skipped, frame_code = skipped + 1, True
            continue
        if frame_code and bare.startswith("    ") and not m:
            frame_code = False
            continue  # the library frame's source line
        frame_code = False
        if skipped:
            out.append("  [%d library frame%s omitted]" % (skipped, "s" if skipped > 1 else ""))
            skipped = 0
        out.append(line)
    if skipped:
        out.append("  [%d library frame%s omitted]" % (skipped, "s" if skipped > 1 else ""))
    return out


def _shown_tail(result):
    """The result's tail as a reader sees it (a tail from elsewhere is cleaned here too)."""
    lines = [str(line).replace("\n", " ") for line in _tail_without_noise(result.tail)]
    return tail_lines("\n".join(lines), len(lines)) if lines else []


def _is_evidence(line, evidence):
    ev = (evidence or "").strip()
    return bool(ev) and (ev in line or line.strip() in ev and len(line.strip()) > 10)


def _manifest_lines(manifest):
    if not manifest:
        return ["  (none)"]
    return ["  %-40s %10s  %s" % (r["name"], _format_size(r["size"]), r["disposition"])
            for r in manifest]


# ---- what you need: the rows a person acts on, before any detail ----

_FRAME_PARTS_RE = re.compile(r'^\s*File "([^"]+)", line (\d+), in (\S+)')  # path, line, function
_LIBRARY_PATH_RE = re.compile(r"(site-packages|dist-packages|/lib/python\d|^<frozen|/usr/lib/)")
_ROOT_CAUSE_RANK_RE = re.compile(r"^\s*rank\s*:\s*(\d+) \(local_rank")


#: A launcher's frames are never the user's: torchrun, accelerate, deepspeed... are console
#: scripts (an extensionless file in a bin/ folder that calls into site-packages); their
#: traceback comes last when a rank fails, and names only themselves. (runpy is a library.)
_LAUNCHER_PATH_RE = re.compile(r"/bin/[^/.]+$")


def user_frame(tail, rank=None):
    """The innermost traceback frame in the user's own code (not a library's, not a
    launcher's): 'train.py:123 in step'. Of the failing rank's lines (and unprefixed ones)
    only: the other ranks fail later, each in its own code."""
    found = None
    for line in tail or ():
        line = str(line)
        number = rank_prefix(line)[0]
        if rank is not None and number is not None and number != rank:
            continue
        m = _FRAME_PARTS_RE.match(strip_rank_prefix(line))
        if m and not _LIBRARY_PATH_RE.search(m.group(1)) and not _LAUNCHER_PATH_RE.search(m.group(1)):
            found = "%s:%s in %s" % (m.group(1), m.group(2), m.group(3))
    return found


def failing_rank(result):
    """The rank that failed: the classifier's, else torchrun's root-cause block, else the
    evidence line's prefix (a verdict made without the log's lines)."""
    c = _classification(result)
    if c.rank is not None:
        return c.rank
    for line in result.tail or ():
        m = _ROOT_CAUSE_RANK_RE.match(str(line))
        if m:
            return int(m.group(1))
    evidence = c.evidence or ""
    rank = rank_prefix(evidence)[0]
    for line in result.tail or ():
        if rank is None and evidence and evidence.strip() in str(line):
            rank = rank_prefix(str(line))[0]
    return rank


def progress_text(metrics, limit=3):
    """'step 9000/20000 (45%), epoch 2.3; loss 0.412 (best 0.398 at step 8500), acc 0.91'."""
    metrics = metrics or {}
    progress = metrics.get("progress") or {}
    where = [_count_text(k, progress[k], progress.get(k + "_total"))
             for k in ("step", "epoch") if progress.get(k) is not None]
    values = []
    for name in (metrics.get("main") or [])[:limit]:
        s = metrics["series"][name]
        if "last" not in s:
            continue
        text = "%s %s" % (name, format_number(s["last"]["value"]))
        best = s.get("best")
        if best and best["value"] != s["last"]["value"]:
            text += " (best %s at %s %s)" % (format_number(best["value"]), s["x"],
                                             format_number(best["x"]))
        values.append(text)
    return "; ".join(p for p in (", ".join(where), ", ".join(values)) if p)


def _count_text(kind, value, total):
    """'step 50/500 (10%)', 'epoch 3/10', 'step 9000' (no total stated)."""
    if not total:
        return "%s %s" % (kind, format_number(value))
    text = "%s %s/%s" % (kind, format_number(value), format_number(total))
    return text if kind == "epoch" else text + " (%d%%)" % (100.0 * value / total)


def checkpoint_text(ckpt, end, metrics=None):
    """'ckpt/step_9000.pt (1.2 GiB), written 08:12, 1h12m before the end: work since then lost';
    after a non-finite loss, the newest written before it, and why not the later ones."""
    if ckpt and ckpt.get("later_nonfinite"):
        return _nonfinite_checkpoint_text(ckpt, end, (metrics or {}).get("first_nonfinite"))
    if not ckpt or not ckpt.get("path"):
        return None
    text = ckpt["path"]
    if ckpt.get("size"):
        text += " (%s)" % _format_size(ckpt["size"])
    text += ", written %s" % time.strftime("%H:%M", time.localtime(ckpt["mtime"]))
    if end and end - ckpt["mtime"] >= 60:
        text += ", %s before the end" % format_duration(end - ckpt["mtime"])
    return text


def _nonfinite_checkpoint_text(ckpt, end, bad):
    where = ", ".join(_count_text(k, (bad or {})[k], None) for k in ("step", "epoch")
                      if (bad or {}).get(k) is not None)
    why = "the first non-finite loss%s" % (" (%s)" % where if where else "")
    later = "%d written after %s" % (ckpt["later_nonfinite"], why)
    if not ckpt.get("path"):
        return "none written before %s; do not resume from the %s" % (why, later)
    return "%s; the %s are not offered" % (checkpoint_text(dict(ckpt, later_nonfinite=0), end), later)


_STEP_RATE_RE = re.compile(r"^([\d.eE+-]+) (?:(it|steps?|iters?)/s(?:ec)?|(m?s)/(?:it(?:er)?|steps?))$", re.I)


def seconds_per_step(rate):
    """'9.8 it/s' -> 0.102, '4.98 s/it' -> 4.98, '61 ms/step' -> 0.061; None for a rate
    that is not per step (samples/s, tokens/s, ms/batch)."""
    m = _STEP_RATE_RE.match(rate or "")
    if not m:
        return None
    value = float(m.group(1))
    if m.group(2):
        return 1.0 / value if value > 0 else None
    return value / 1000.0 if m.group(3).lower() == "ms" else value


def finish_text(metrics, left_s, now):
    """For a time-limit warning: will the run finish in the time left at the speed the log
    last stated, and how old is the newest checkpoint. None when neither is known."""
    metrics, parts = metrics or {}, []
    progress = metrics.get("progress") or {}
    step, total = progress.get("step"), progress.get("step_total")
    per_step = seconds_per_step(metrics.get("throughput"))
    if step is not None and total and per_step and left_s is not None:
        need = (total - step) * per_step
        verdict = "it will finish" if need <= left_s else "it will NOT finish"
        parts.append("%s before the limit: %s steps to go at %s need about %s, %s left" % (
            verdict, format_number(total - step), metrics["throughput"], format_duration(need),
            format_duration(max(0.0, left_s))))
    ckpt = metrics.get("checkpoint") or {}
    if ckpt.get("path") and ckpt.get("mtime"):
        parts.append("the newest checkpoint was written %s ago" % format_duration(max(0.0, now - ckpt["mtime"])))
    elif metrics:
        parts.append("no checkpoint written during this run found")
    return "; ".join(parts) or None


def _time_limit_text(result):
    """How much of the scheduler's time limit the run used: the limit itself when known (the
    job starts a little before the wrapper), else the time from our start to the job's end."""
    sched = result.scheduler or {}
    end_time, limit = _usable_end_time(sched.get("end_time"), result.start), sched.get("limit_s")
    if not result.start or not (end_time or limit):
        return None
    used = _duration_s(result) or 0
    limit = limit or end_time - result.start
    if used > limit and result.status != "TIMEOUT":
        return None  # the limit was raised after we read it: what we know is stale
    left = end_time - (result.start + used) if end_time else limit - used
    return "%s of %s allowed (%s left)" % (format_duration(used), format_duration(limit),
                                          format_duration(max(0.0, left)))


def _resubmit_text(result):
    """How to run it again, by cause: a requeue only where nothing needs changing; more time
    for a time limit (with the figure); another node for a GPU fault; else fix it first."""
    req, sched, c = result.requeue or {}, result.scheduler or {}, _classification(result)
    if req.get("state") == "done" and req.get("command"):  # --requeue did it: say so, nothing to do
        return "done by gpualert: %s" % req["command"]
    if sched.get("kind") != "slurm" or not sched.get("job_id") or result.end is None \
            or result.status == "SUCCESS":
        return None
    where = " from %s" % sched["submit_dir"] if sched.get("submit_dir") else ""
    if c.rule == "hang":  # more time would hang as long
        return "sbatch again%s once the hang is found (see the hint), resuming from the last checkpoint" % where
    if c.rule == "wrapper_timeout":
        return "sbatch again%s with a longer gpualert --timeout than the %s it had" % (
            where, format_duration(_duration_s(result) or 0))
    if c.cls == "walltime":
        return _more_time_text(result, where)
    if c.cls == "gpu_hardware":
        return "sbatch --exclude=%s again%s (a requeue may land on the same GPU)" % (
            result.host or sched.get("nodelist") or "NODE", where)
    if c.cls not in REQUEUE_CLASSES:
        return "sbatch again%s once the cause is fixed (a requeue reruns the same failure)" % where
    if req.get("state") == "refused":  # the Requeue row says why Slurm will not requeue it
        return "sbatch again%s, resuming from the last checkpoint (no requeue: see Requeue)" % where
    text = "scontrol requeue %s" % _query_id(sched)
    if sched.get("submit_dir"):
        text += "  (while Slurm still lists the job; else sbatch again from %s)" % sched["submit_dir"]
    return text


def _more_time_text(result, where):
    """'sbatch --time=17:45:00 again from DIR, resuming from the last checkpoint (its limit was
    12h00m; it reached epoch 75/100, so the whole run needs about 17h36m)'."""
    sched = result.scheduler or {}
    end_time = _usable_end_time(sched.get("end_time"), result.start)
    limit = sched.get("limit_s") or (end_time - result.start if end_time else None)
    if sched.get("unlimited"):  # a time-limit line the job printed is not its limit
        return ("sbatch again%s, resuming from the last checkpoint (its time limit is UNLIMITED: "
                "no --time to raise)" % where)
    if not limit:  # the run's length is no limit: a --time from it could cut the real one
        return "sbatch again%s with a longer --time, resuming from the last checkpoint" % where
    need, reached = _time_needed_s(result, limit)
    ask = int(-(-need // 900) * 900)  # rounded up to a quarter hour
    why = "its limit was %s" % format_duration(limit)
    if reached:
        why += "; it reached %s, so the whole run needs about %s" % (reached, format_duration(need))
    return "sbatch --time=%d:%02d:00 again%s, resuming from the last checkpoint (%s)" % (
        ask // 3600, ask % 3600 // 60, where, why)


def _time_needed_s(result, limit):
    """(seconds the whole run needs, the progress it is judged from or None): from the log's
    N of M when it gave a total (10% spare), else half as much again as the limit."""
    progress = (result.metrics or {}).get("progress") or {}
    for kind in ("step", "epoch"):
        done, total = progress.get(kind), progress.get(kind + "_total")
        if done and total and 0 < done < total:
            return limit * float(total) / done * 1.1, _count_text(kind, done, total)
    return limit * 1.5, None


def _gpu_brief(gpu):
    parts = []
    for g in (gpu or {}).get("gpus") or []:
        bit = "GPU%s" % g.get("index")
        if g.get("util_mean_pct") is not None:
            bit += " %s%% busy" % g["util_mean_pct"]
        if g.get("mem_used_peak_mib") is not None and g.get("mem_total_mib"):
            bit += ", %.0f/%.0f GiB peak" % (g["mem_used_peak_mib"] / 1024.0, g["mem_total_mib"] / 1024.0)
        parts.append(bit)
    return "; ".join(parts[:4]) + ("; ..." if len(parts) > 4 else "")


_BYTES_RE = re.compile(r"\b(\d{7,}) bytes\b")


def readable_bytes(text):
    """'tried to allocate 68719476736 bytes' -> 'tried to allocate 64.0 GiB (68719476736 bytes)'."""
    return _BYTES_RE.sub(lambda m: "%s (%s bytes)" % (_format_size(int(m.group(1))), m.group(1)),
                         str(text)) if text else text


def sizes_beside(text):
    """The byte counts of a quoted line, readable, to go beside it (the line itself is quoted
    as the log has it, so grepping for it finds it): ' [68719476736 bytes = 64.0 GiB]', or ''."""
    sizes = ["%s bytes = %s" % (m.group(1), _format_size(int(m.group(1))))
             for m in _BYTES_RE.finditer(str(text or ""))]
    return " [%s]" % "; ".join(sizes) if sizes else ""


def _quoted(text, limit):
    """A log line quoted in a message: only control characters (ESC, CR) become spaces; runs
    of spaces stay, so the quote is the line as written."""
    return _fit(_CONTROL_RE.sub(" ", _utf8_text(str(text or ""))).rstrip(), limit)


#: The first screen of a run as one value: the e-mail's text and HTML parts and every chat
#: payload render it, so they cannot disagree. fields: (label, value) rows in the order they
#: matter; evidence: the decisive line alone (chat quotes it as code); text: the rows as lines.
Brief = collections.namedtuple("Brief", "title status cls severity fields evidence text")
_SEVERITY_OF = {"FAILED": "failure", "TIMEOUT": "failure", "PREEMPTED": "warning",
                "INTERRUPTED": "warning", "SILENT": "failure", "STALLED": "warning",
                "WARNING": "warning"}
_PROGRESS_RE = re.compile(r"(?<![\w/.:-])\d+/\d+(?![\w/.:-])|\b\d+%\||(?i:\b(?:epoch|step|iter(?:ation)?)\b\s*[:=#]?\s*\d+)")


def brief_for(result):
    """The first screen (what, where, line, progress, checkpoint, time, next) as a Brief."""
    c = _classification(result)
    status = _clean(result.status or "UNKNOWN", 20).upper()
    rows = _array_rows(result) if result.array else _first_rows(result, c)
    rows = [(label, _quoted(value, 2000) if label == "Line" else _clean(value, 2000)) for label, value in rows]
    evidence = "" if result.array else _quoted(c.evidence, 2000)
    return Brief(render_subject(result), status, c.cls, _SEVERITY_OF.get(status, "ok"), rows,
                 evidence, "\n".join("%s: %s" % kv for kv in rows))


def _array_rows(result):
    """An array's summary: the counts, how many reported, how long they took."""
    summary, d = result.array, result.array.get("duration_s") or {}
    others = "; the others are listed with Slurm's state" if summary.get("missing") else ""
    rows = [("What", "%s: %s" % (result.status, array_subject(summary))),
            ("Tasks", "%d of %s tasks reported%s" % (summary["tasks"], summary.get("expected") or "?", others))]
    if d:
        rows.append(("Durations", "%s to %s, mean %s" % (
            format_duration(d["min"]), format_duration(d["max"]), format_duration(d["mean"]))))
    return rows


def _first_rows(result, c):
    m = result.metrics or {}
    c = c._replace(detail=readable_bytes(c.detail))
    ok = result.status in ("SUCCESS", "TEST")
    verdict = result.status + (": %s" % c.cls if c.cls else "")
    if ok and result.status == "SUCCESS" and _duration_s(result) is not None:
        verdict += " after %s" % format_duration(_duration_s(result))
    rank = failing_rank(result) if not ok else None
    if rank is not None:
        verdict += " on rank %d" % rank
    if c.detail:
        verdict += " (%s)" % c.detail
    rows = [("What", verdict)]
    frame = None if ok else user_frame(result.tail, rank)
    if frame:
        rows.append(("Where", frame))
    if c.evidence:
        place = evidence_place(result, c.line)
        rows.append(("Line", (place + ": " if place else "") + str(c.evidence) + sizes_beside(c.evidence)))
    progress = progress_text(m) or last_progress(result.tail or ())  # metrics, else the log's line
    if progress:
        rows.append(("Result" if ok else "Progress", progress))
    if m.get("throughput"):
        rows.append(("Speed", "%s (last stated in the log)" % m["throughput"]))
    if m.get("finish"):  # a time-limit warning's estimate (finish_text)
        rows.append(("Finish", m["finish"]))
    if ok and _gpu_brief(result.gpu):
        rows.append(("GPUs", _gpu_brief(result.gpu)))
    ckpt = checkpoint_text(m.get("checkpoint"), result.end, m)
    if ckpt:
        poisoned = (m.get("checkpoint") or {}).get("later_nonfinite")
        rows.append(("Checkpoint", ckpt + ("" if ok or poisoned or "before the end" not in ckpt
                                            else ": work since then is lost")))
    if _time_limit_text(result):
        rows.append(("Time", _time_limit_text(result)))
    rows += _file_rows(result, m)
    if c.remediation and not ok:
        rows.append(("Next", c.remediation))
    rows += [("Undelivered", note) for note in result.notes or ()
             if note.split(" ", 1)[-1].startswith(DEAD_NOTE_HEAD)]
    rows += requeue_rows(result)
    if _resubmit_text(result):
        rows.append(("Resubmit", _resubmit_text(result)))
    return rows


def last_progress(tail):
    """The last line of the tail that shows progress (450/5000, 45%|, epoch 3), clipped."""
    for line in reversed(list(tail)[-TAIL_LINES:]):
        text = _clean(line)
        if text and _PROGRESS_RE.search(text):
            return _fit(text, 160)
    return None


def evidence_place(result, line):
    """Where the evidence line is, as file:line in a file the user has: the job's own output
    file ('slurm-15.out:91') when the log's line maps to it, else the run log's
    ('output.log:97', which has gpualert's header above the output). None without a line."""
    if not line:
        return None
    mapped = (result.metrics or {}).get("job_output_map") or {}
    if mapped and mapped["first"] <= line <= mapped["last"]:
        return "%s:%d" % (os.path.basename(result.metrics["job_output"]), line + mapped["offset"])
    return "%s:%d" % (os.path.basename(result.log_path or "output.log"), line)


def _file_rows(result, metrics):
    rows = []
    if metrics.get("job_output") and metrics["job_output"] != result.log_path:
        rows.append(("Job output", metrics["job_output"]))
    if result.log_path:
        rows.append(("Log", result.log_path))
    if result.run_dir:
        rows.append(("Run dir", result.run_dir))
    return rows


def metric_lines(metrics):
    """One line per main metric for the plain part: a sparkline, first -> last, best."""
    metrics = metrics or {}
    lines = []
    for name in metrics.get("main") or []:
        s = metrics["series"][name]
        if "last" not in s:
            continue
        spark = sparkline([p[1] for p in s.get("points") or []])
        text = "%-14s %-24s %s -> %s" % (name, spark, format_number(s["first"]["value"]),
                                         format_number(s["last"]["value"]))
        if s.get("best"):
            text += ", best %s at %s %s" % (format_number(s["best"]["value"]), s["x"],
                                            format_number(s["best"]["x"]))
        if s.get("nonfinite"):
            text += ", %d non-finite" % s["nonfinite"]
        lines.append(text)
    return lines


def plot_alt_text(metrics, gpu):
    """What the picture shows, for mail clients that block images and for screen readers."""
    parts = []
    for name in (metrics or {}).get("main") or []:
        s = metrics["series"][name]
        if "last" in s:
            parts.append("%s from %s to %s over %s %s" % (
                name, format_number(s["first"]["value"]), format_number(s["last"]["value"]),
                s["x"], format_number(s["last"]["x"])))
            if s.get("first_nonfinite_x") is not None:
                parts[-1] += ", non-finite from %s %s" % (s["x"], format_number(s["first_nonfinite_x"]))
    if len((gpu or {}).get("series") or []) >= 2:
        parts.append("GPU utilisation and memory over time")
    return "Curves: " + "; ".join(parts) if parts else "Curves of the run"


def render_text(result, manifest):
    """The plain-text body (pure)."""
    c = _classification(result)
    if result.digest:
        return render_digest_text(result.digest)
    brief = brief_for(result)
    lines = [brief.title[len("[gpualert] "):], "", "What you need:"] + _text_rows(brief.fields)
    below = _notes_below(result, brief)
    notes = ["", "Notes:"] + ["  - " + _clean(n, 1000) for n in below] if below else []
    if result.array:  # a summary: the table of tasks is the message
        lines += ["", "Tasks:"] + _array_text_table(result.array) + ["", _ARRAY_LOGS] + notes
        return "\n".join(lines) + "\n"
    if metric_lines(result.metrics):
        lines += ["", "Metrics (%s):" % _metrics_source(result.metrics)]
        lines += ["  " + line for line in metric_lines(result.metrics)]
    lines += ["", "Details:"] + _text_rows(_summary_rows(result)) + notes
    tail = _shown_tail(result)
    mark = any(_is_evidence(t, c.evidence) for t in tail)
    lines += ["", "Last %d lines of output%s:" % (
        len(tail), " (>> marks the evidence line)" if mark else "") if tail else "No lines of output shown."]
    lines += [(">> " if _is_evidence(t, c.evidence) else "   ") + t for t in tail]
    lines += ["", "Attachments and artifacts:"] + _manifest_lines(manifest)
    return "\n".join(lines) + "\n"


def _notes_below(result, brief):
    """The notes the message lists below its first rows: those not shown in them already."""
    shown = set(value for _, value in brief.fields)
    return [n for n in result.notes or () if _clean(n, 2000) not in shown]


def _text_rows(rows):
    return ["  %-11s %s" % (label + ":" if label else "", value) for label, value in rows]


def _array_text_table(summary):
    header = ("task", "status", "class", "duration", "last metric", "log")
    rows = [header] + list(array_task_rows(summary))
    widths = [max(len(str(r[i])) for r in rows) for i in range(5)]
    return ["  " + "  ".join(str(r[i]).ljust(widths[i]) for i in range(5)) + "  " + str(r[5])
            for r in rows]


_ARRAY_LOGS = "Each task's own log is listed above; nothing of one task is attached here."


def _array_html_table(summary):
    import html
    head = "".join("<th align=\"left\">%s</th>" % h for h in
                   ("task", "status", "class", "duration", "last metric", "log"))
    body = "".join("<tr>%s</tr>" % "".join('<td style="%s">%s</td>' % (_HTML_WRAP, html.escape(str(v)))
                                            for v in row) for row in array_task_rows(summary))
    return ['<table cellpadding="3" border="1" style="border-collapse:collapse;width:100%%;%s;'
            'font-size:13px"><tr>%s</tr>%s</table>' % (_HTML_WRAP, head, body)]


def _metrics_source(metrics):
    if metrics.get("sampled"):
        return "from a sample of the log: first and last values exact, best among %d records" % (
            metrics.get("records") or 0)
    return "from the log, %d records" % (metrics.get("records") or 0)


_HTML_WRAP = "overflow-wrap:anywhere;word-break:break-word"


def _html_table(rows, highlight=("Line",), code=("Line", "Command", "Resubmit")):
    import html
    esc = html.escape
    out = ['<table cellpadding="4" style="border-collapse:collapse;width:100%%;'
           'table-layout:fixed;%s">' % _HTML_WRAP,
           '<col style="width:7.5em"><col>']
    for label, value in rows:
        style = ' style="background:#fff3b0"' if label in highlight else ""
        value = "<code>%s</code>" % esc(value) if label in code else esc(value)
        out.append('<tr><th align="left" valign="top">%s</th><td%s>%s</td></tr>' % (
            esc(label), style, value))
    return out + ["</table>"]


def render_html(result, manifest, image_cid=None):
    """The HTML alternative (pure): what you need, the picture (an inline image by Content-ID
    when image_cid is given), details, the tail. Wraps at any width: nothing scrolls sideways."""
    import html
    esc = html.escape
    if result.digest:
        return render_digest_html(result.digest)
    c, brief = _classification(result), brief_for(result)
    color = {"SUCCESS": "#1a7f37", "COMPLETED": "#9a6700", "TEST": "#0969da"}.get(
        result.status, "#cf222e")
    out = ['<html><head><meta name="viewport" content="width=device-width, initial-scale=1">'
           '</head><body style="font-family:sans-serif;margin:8px;%s">' % _HTML_WRAP,
           '<h2 style="color:%s">%s</h2>' % (color, esc(brief.title[11:])), "<h3>What you need</h3>"]
    out += _html_table(brief.fields)
    if result.array:
        out += ["<h3>Tasks</h3>"] + _array_html_table(result.array) + ["<p>%s</p>" % esc(_ARRAY_LOGS)]
        return "\n".join(out + ["</body></html>"]) + "\n"
    if image_cid:
        out.append('<p><img src="cid:%s" alt="%s" width="%d" style="max-width:100%%;'
                   'height:auto;border:0"></p>' % (esc(image_cid), esc(plot_alt_text(
                       result.metrics, result.gpu)), PLOT_WIDTH))
    if metric_lines(result.metrics) and not image_cid:
        out.append('<pre style="white-space:pre-wrap;%s;font-size:12px">%s</pre>' % (
            _HTML_WRAP, esc("\n".join(metric_lines(result.metrics)))))
    out.append("<h3>Details</h3>")
    out += _html_table(_summary_rows(result))
    below = _notes_below(result, brief)
    if below:
        out.append("<h3>Notes</h3><ul>%s</ul>" % "".join(
            "<li>%s</li>" % esc(_clean(n, 1000)) for n in below))
    tail = _shown_tail(result)
    out.append("<h3>Last %d lines of output</h3>" % len(tail) if tail else "<h3>No lines of output shown</h3>")
    shown = "\n".join(('<mark>%s</mark>' % esc(t)) if _is_evidence(t, c.evidence) else esc(t)
                      for t in tail)
    out.append('<pre style="background:#f6f8fa;padding:8px;font-size:12px;white-space:pre-wrap;'
               '%s">%s</pre>' % (_HTML_WRAP, shown))
    out.append("<h3>Attachments and artifacts</h3>" + _manifest_html(manifest))
    out.append("</body></html>")
    return "\n".join(out) + "\n"


def _manifest_html(manifest):
    import html
    if not manifest:
        return "<p>(none)</p>"
    rows = ["<tr><td>%s</td><td align=\"right\">%s</td><td>%s</td></tr>" % (
        html.escape(r["name"]), html.escape(_format_size(r["size"])),
        html.escape(r["disposition"])) for r in manifest]
    rows = [r.replace("<td>", '<td style="%s">' % _HTML_WRAP) for r in rows]
    return ('<table cellpadding="3" border="1" style="border-collapse:collapse;%s">'
            "<tr><th>file</th><th>size</th><th>disposition</th></tr>%s</table>" % (
                _HTML_WRAP, "".join(rows)))


def render_digest_text(digest):
    """The digest's plain part (pure), from digest_sections."""
    lines = [digest_subject(digest)[len("[gpualert] "):], ""]
    for heading, items in digest_sections(digest):
        lines.append(heading + ":")
        for head, details, alarm in items:
            lines.append(("  !! " if alarm else "  ") + head)
            lines += ["      " + d for d in details]
        lines.append("")
    lines.append("Every run of the period: gpualert.py runs --since %s" % format_duration(
        digest["since_s"]))
    return "\n".join(lines) + "\n"


def render_digest_html(digest):
    """The digest's HTML part (pure): the same sections; wraps at any width."""
    import html
    esc = html.escape
    color = "#cf222e" if digest["failed"] else "#1a7f37"
    out = ['<html><head><meta name="viewport" content="width=device-width, initial-scale=1">'
           '</head><body style="font-family:sans-serif;margin:8px;%s">' % _HTML_WRAP,
           '<h2 style="color:%s">%s</h2>' % (color, esc(digest_subject(digest)[11:]))]
    for heading, items in digest_sections(digest):
        out.append('<h3>%s</h3><ul style="padding-left:1.2em;margin:0">' % esc(heading))
        for head, details, alarm in items:
            style = ' style="background:#fff3b0;padding:4px"' if alarm else ' style="padding:2px 0"'
            body = "".join('<br><span style="font-size:13px">%s</span>' % esc(d) for d in details)
            out.append("<li%s><b>%s</b>%s</li>" % (style, esc(head), body))
        out.append("</ul>")
    return "\n".join(out + ["</body></html>"]) + "\n"


# ==== Pure core: channels ====

# A channel is one --notify-url: a chat or push service that gets a short message beside
# the e-mail. Parsing a URL, masking its secrets and building the request each service
# documents are pure; posting the request is an edge (Edges: HTTP channels).

Channel = collections.namedtuple("Channel", "service url masked when secrets parts")
HttpRequest = collections.namedtuple("HttpRequest", "method url headers body")

CHANNEL_WHEN_PARAM = "gpualert_when"
#: Schemes gpualert speaks itself; any other scheme goes to `apprise` when it is installed.
NATIVE_SCHEMES = ("http", "https", "ntfy", "ntfys", "gotify", "gotifys", "pover", "tgram",
                  "matrix", "matrixs", "json", "jsons")


def mask_text(text, secrets):
    """text with every secret (and its percent-encoded form) replaced by ***."""
    text = str(text)
    for secret in sorted(secrets or (), key=len, reverse=True):
        if secret and len(secret) >= 3:
            text = text.replace(secret, MASK)
    return text


def mask_url(url):
    """The URL as gpualert shows it anywhere: tokens, passwords and topics as ***."""
    try:
        return parse_channel(url).masked
    except ConfigError:
        return _mask_unparsed(url)


def _mask_unparsed(url):
    scheme, sep, _ = str(url).partition("://")
    return (_clean(scheme, 20) + "://" + MASK) if sep else MASK


def parse_channel(url):
    """One --notify-url -> Channel; ConfigError (with the URL masked) if it cannot be used."""
    from urllib.parse import urlsplit
    raw = str(url).strip()
    if not raw or not re.match(r"^[A-Za-z][A-Za-z0-9+.-]*://", raw) or re.search(r"\s", raw):
        # without a scheme nothing parses as a secret's place: the text shown is what was typed
        shown = _mask_unparsed(raw) if "://" in raw else repr(_clean(mask_secrets(raw), 60))
        raise ConfigError("notify URL %s: not a URL (want e.g. https://hooks.slack.com/... "
                          "or ntfys://host/topic)" % shown)
    raw, when = _pop_when(raw)
    scheme = raw.split("://", 1)[0].lower()
    if scheme not in NATIVE_SCHEMES:
        return Channel("apprise", raw, _mask_unparsed(raw), when, (_after_scheme(raw),), {})
    found = []  # what SECRET_SHAPES masks, also each part of it and its decoded form
    masked = mask_secrets(raw, found)
    found += [part for secret in found for part in re.split(r"[/#?@:]", secret)]
    found += [_unquote(secret) for secret in found]
    secrets = tuple(sorted(set(found + [_quote(secret) for secret in found]) - {""}))
    try:
        service, parts = _CHANNEL_PARSERS[scheme](urlsplit(raw), raw)
    except (ValueError, IndexError) as exc:  # urllib's words may quote a password: masked
        raise ConfigError("notify URL %s: %s" % (_mask_unparsed(raw), mask_text(exc, secrets)))
    return Channel(service, raw, masked, when, secrets, parts)


def _after_scheme(raw):
    return raw.split("://", 1)[1]


def _quote(text):
    from urllib.parse import quote
    return quote(text, safe="")


def _unquote(text):
    from urllib.parse import unquote
    return unquote(text)


def _pop_when(raw):
    """Remove ?gpualert_when=always|failure|never; (url without it, value or None)."""
    base, sep, query = raw.partition("?")
    if not sep:
        return raw, None
    query, hash_sep, fragment = query.partition("#")
    keep, when = [], None
    for item in query.split("&"):
        name, _, value = item.partition("=")
        if name == CHANNEL_WHEN_PARAM:
            if value not in ("always", "failure", "never"):
                raise ConfigError("notify URL %s: %s=%r is not one of always, failure, never"
                                  % (_mask_unparsed(raw), CHANNEL_WHEN_PARAM, value))
            when = value
        elif item:
            keep.append(item)
    out = base + ("?" + "&".join(keep) if keep else "") + (hash_sep + fragment)
    return out, when


def _userinfo(split):
    """(user, password) from the URL, percent-decoded; None where absent."""
    from urllib.parse import unquote
    netloc = split.netloc
    if "@" not in netloc:
        return None, None
    info = netloc.rsplit("@", 1)[0]
    user, sep, password = info.partition(":")
    return (unquote(user) or None), (unquote(password) if sep else None)


def _host_port(split, secure):
    host = split.hostname
    if not host:
        raise ValueError("no host")
    port = split.port  # ValueError for a port that is not a number
    default = 443 if secure else 80
    shown = "[%s]" % host if ":" in host else host
    return "%s://%s%s" % ("https" if secure else "http", shown,
                          "" if port in (None, default) else ":%d" % port)


def _path_parts(split):
    from urllib.parse import unquote
    return [unquote(p) for p in split.path.split("/") if p]


def _parse_webhook(split, raw):
    """An https:// (or http://) webhook URL: the service is told by its host and path."""
    host = (split.hostname or "").lower()
    path = _path_parts(split)
    for service, test in _WEBHOOK_KINDS:
        if test(host, path):
            return service, {}
    raise ValueError("cannot tell which service this is (Slack, Discord, Teams, Google Chat, "
                     "Mattermost, Rocket.Chat and ntfy webhooks are known; use json(s)://HOST/PATH "
                     "for a plain JSON POST)")


def _is_teams(host, path):
    return (host.endswith(".webhook.office.com") or host.endswith(".logic.azure.com")
            or host.endswith("powerplatform.com") or host.endswith("powerautomate.com")
            or host == "flow.microsoft.com" or "powerautomate" in path)


_WEBHOOK_KINDS = (  # (service, test(host, path segments)); SECRET_SHAPES says what is secret
    ("slack", lambda h, p: h == "hooks.slack.com"),
    ("discord", lambda h, p: (h in ("discord.com", "discordapp.com") or h.endswith(".discord.com"))
     and p[:2] == ["api", "webhooks"]),
    ("teams", _is_teams),
    ("googlechat", lambda h, p: h == "chat.googleapis.com"),
    ("mattermost", lambda h, p: len(p) == 2 and p[0] == "hooks"),
    ("rocketchat", lambda h, p: len(p) == 3 and p[0] == "hooks"),
    ("ntfy", lambda h, p: (h == "ntfy.sh" or h.startswith("ntfy.")) and len(p) == 1),
)


def _parse_ntfy(split, raw):
    """ntfy(s)://[USER:PASS@|:TOKEN@]HOST[:PORT]/TOPIC, or ntfy://TOPIC for ntfy.sh."""
    path = _path_parts(split)
    secure = split.scheme.lower() == "ntfys"
    if not path:  # apprise's short form: the host part is a topic on the public server
        topic, base = split.hostname, "https://ntfy.sh"
    elif len(path) == 1:
        topic, base = path[0], _host_port(split, secure)
    else:
        raise ValueError("want one topic: ntfy(s)://HOST/TOPIC")
    if not topic:
        raise ValueError("no topic")
    user, password = _userinfo(split)
    return "ntfy", {"endpoint": base + "/" + _quote(topic), "user": user, "password": password}


def _parse_gotify(split, raw):
    """gotify(s)://HOST[:PORT][/PATH]/APPTOKEN -> POST .../message."""
    path = _path_parts(split)
    if not path:
        raise ValueError("no application token: gotify(s)://HOST/TOKEN")
    base = _host_port(split, split.scheme.lower() == "gotifys")
    prefix = "".join("/" + _quote(p) for p in path[:-1])
    return "gotify", {"endpoint": base + prefix + "/message", "token": path[-1]}


def _parse_pover(split, raw):
    """pover://USERKEY@APPTOKEN (apprise's form) -> Pushover's messages API."""
    netloc = split.netloc
    if "@" not in netloc:
        raise ValueError("want pover://USERKEY@APPTOKEN")
    user, token = netloc.rsplit("@", 1)
    if not user or not token:
        raise ValueError("want pover://USERKEY@APPTOKEN")
    return "pushover", {"endpoint": "https://api.pushover.net/1/messages.json",
                        "user": user, "token": token}


def _parse_tgram(split, raw):
    """tgram://BOTTOKEN/CHATID -> the Bot API's sendMessage (the token holds a colon, so the
    netloc is taken as it is, not as host:port)."""
    token = split.netloc
    chats = _path_parts(split)
    if not token or len(chats) != 1:
        raise ValueError("want tgram://BOTTOKEN/CHATID (one chat; repeat --notify-url for more)")
    return "telegram", {"endpoint": "https://api.telegram.org/bot%s/sendMessage" % token,
                        "chat_id": chats[0]}


def _parse_matrix(split, raw):
    """matrix(s)://[USER:]TOKEN@HOST[:PORT]/#ROOM (alias), /!ROOMID:SERVER or /ROOM."""
    user, password = _userinfo(split)
    token = password if password is not None else user
    if not token:
        raise ValueError("no access token: matrix(s)://USER:TOKEN@HOST/#room")
    path = [p for p in _path_parts(split)] + ([split.fragment] if split.fragment else [])
    if len(path) != 1:
        raise ValueError("want one room: matrix(s)://USER:TOKEN@HOST/#room:server")
    room = path[0]
    if room[0] not in "#!":
        room = "#" + room
    return "matrix", {"base": _host_port(split, split.scheme.lower() == "matrixs"),
                               "token": token, "room": room}


def _parse_json(split, raw):
    """json(s)://[USER:PASS@]HOST[:PORT]/PATH -> POST the run record as JSON."""
    base = _host_port(split, split.scheme.lower() == "jsons")
    path = split.path or "/"
    query = ("?" + split.query) if split.query else ""
    user, password = _userinfo(split)
    return "json", {"endpoint": base + path + query, "user": user, "password": password}


_CHANNEL_PARSERS = {
    "http": _parse_webhook, "https": _parse_webhook, "ntfy": _parse_ntfy, "ntfys": _parse_ntfy,
    "gotify": _parse_gotify, "gotifys": _parse_gotify, "pover": _parse_pover,
    "tgram": _parse_tgram, "matrix": _parse_matrix, "matrixs": _parse_matrix,
    "json": _parse_json, "jsons": _parse_json,
}


def _json_body(payload):
    import json
    return _utf8_text(json.dumps(json_ready(payload), ensure_ascii=False, default=str)).encode("utf-8")


def _json_request(url, payload, headers=None):
    head = {"Content-Type": "application/json; charset=utf-8"}
    head.update(headers or {})
    return HttpRequest("POST", url, head, _json_body(payload))


_COLOUR = {"failure": 0xD32F2F, "warning": 0xF9A825, "ok": 0x2E7D32}
_EMOJI = {"failure": ":rotating_light:", "warning": ":warning:", "ok": ":white_check_mark:"}


ZERO_WIDTH_SPACE = "\u200b"  # breaks a mention or link markup, unseen by the reader
ENTITY_SERVICES = ("slack", "telegram")  # their text is HTML-escaped; readers see it decoded


def _slack_escape(text):
    """Slack's three control characters, and no @channel/@here from a log line."""
    return _html(text).replace("@", "@" + ZERO_WIDTH_SPACE)


def build_slack(channel, summary):
    """Slack incoming webhook: fallback text plus blocks (header <= 150, section <= 3000)."""
    lines = "\n".join("*%s:* %s" % (k, _slack_escape(v)) for k, v in summary.fields
                      if k != "Line")
    header = _fit(summary.title, 150).replace("@", "@" + ZERO_WIDTH_SPACE)
    blocks = [{"type": "header", "text": {"type": "plain_text", "text": header}},
              {"type": "section", "text": {"type": "mrkdwn", "text": _fit(lines, 3000)}}]
    if summary.evidence:
        quoted = "```%s```" % _fit(_slack_escape(summary.evidence).replace("```", "'''"), 2990)
        blocks.append({"type": "section", "text": {"type": "mrkdwn", "text": quoted}})
    text = "%s %s" % (_EMOJI[summary.severity], _slack_escape(summary.title))
    return _json_request(channel.url, {"text": _fit(text, 3000), "blocks": blocks})


def build_discord(channel, summary):
    """Discord execute-webhook: content <= 2,000; one embed (title 256, description 4,096,
    field values 1,024, 6,000 in all); mentions from log text never ping anyone."""
    # Field values and titles are markdown: [label](url) from a log line must not become a
    # link whose label hides where it goes (the evidence's code block is literal already).
    fields = [{"name": _fit(k, 256), "value": _fit(_no_links(v), 1024),
               "inline": False} for k, v in summary.fields if k != "Line"][:25]
    desc = "```\n%s\n```" % _fit(summary.evidence.replace("```", "'''"), 3900) if summary.evidence else ""
    embed = {"title": _fit(_no_links(summary.title), 256), "color": _COLOUR[summary.severity],
             "description": desc, "fields": fields}
    while _embed_chars(embed) > 6000 and embed["fields"]:
        embed["fields"].pop()
    return _json_request(channel.url, {"content": _fit(_no_links(summary.title), 2000),
                                       "embeds": [embed], "allowed_mentions": {"parse": []}})


def _embed_chars(embed):
    return len(embed["title"]) + len(embed["description"]) + sum(
        len(f["name"]) + len(f["value"]) for f in embed["fields"])


def build_teams(channel, summary):
    """Teams Workflows ('When a Teams webhook request is received'): an Adaptive Card."""
    colour = {"failure": "Attention", "warning": "Warning", "ok": "Good"}[summary.severity]
    body = [{"type": "TextBlock", "text": _fit(summary.title, 400), "weight": "Bolder",
             "size": "Medium", "wrap": True, "color": colour},
            {"type": "FactSet", "facts": [{"title": k, "value": _no_links(_fit(v, 1000))}
                                          for k, v in summary.fields if k != "Line"]}]
    if summary.evidence:
        body.append({"type": "TextBlock", "text": _no_links(_fit(summary.evidence, 2000)),
                     "wrap": True, "fontType": "Monospace"})
    card = {"$schema": "http://adaptivecards.io/schemas/adaptive-card.json",
            "type": "AdaptiveCard", "version": "1.4", "body": body}
    return _json_request(channel.url, {"type": "message", "attachments": [
        {"contentType": "application/vnd.microsoft.card.adaptive", "contentUrl": None,
         "content": card}]})


def build_googlechat(channel, summary):
    """Google Chat incoming webhook: a text message (4,096 characters at most)."""
    text = "*%s*\n%s" % (summary.title, summary.text)
    return _json_request(channel.url, {"text": _fit(_no_links(text), 4096)})


def _no_mentions(text):
    """@all, @channel, @here (and Slack-style <!here>) from a log line must not page a whole
    chat: a zero-width space keeps the text and breaks the mention (Mattermost, Rocket.Chat)."""
    return _no_links(str(text).replace("@", "@" + ZERO_WIDTH_SPACE))


def _no_links(text):
    """[label](url) and <url|label> from a log line must not become a link whose label hides
    where it goes (markdown in Teams, Mattermost, Rocket.Chat; Google Chat's own syntax): a
    zero-width space keeps the text and breaks the markup."""
    return str(text).replace("](", "]%s(" % ZERO_WIDTH_SPACE).replace("<", "<" + ZERO_WIDTH_SPACE)


def build_mattermost(channel, summary):
    """Mattermost incoming webhook: text plus a Slack-style coloured attachment (<= 4,000)."""
    fields = [{"short": False, "title": k,
               "value": _no_mentions(_fit(v, 1000))} for k, v in summary.fields]
    title = _no_mentions(_fit(summary.title, 300))
    attachment = {"fallback": title, "color": "#%06X" % _COLOUR[summary.severity],
                  "title": title, "fields": fields}
    return _json_request(channel.url, {"text": _no_mentions(_fit(summary.title, 4000)),
                                       "username": "gpualert", "attachments": [attachment]})


def build_rocketchat(channel, summary):
    """Rocket.Chat incoming webhook: text plus one coloured attachment."""
    return _json_request(channel.url, {"text": _no_mentions(_fit(summary.title, 4000)), "attachments": [
        {"title": _no_mentions(_fit(summary.title, 300)), "text": _no_mentions(_fit(summary.text, 4000)),
         "color": "#%06X" % _COLOUR[summary.severity]}]})


def _header_text(text):
    """A header value: ASCII as it is, anything else as an RFC 2047 word (ntfy decodes it)."""
    import base64
    text = _clean(text, 250)
    try:
        text.encode("ascii")
        return text
    except UnicodeEncodeError:
        return "=?UTF-8?B?%s?=" % base64.b64encode(text.encode("utf-8")).decode("ascii")


def _basic_auth(user, password):
    import base64
    pair = ("%s:%s" % (user or "", password or "")).encode("utf-8")
    return "Basic " + base64.b64encode(pair).decode("ascii")


def build_ntfy(channel, summary):
    """ntfy publish: POST /TOPIC, the body is the message (<= 4,096 bytes), Title,
    Priority (failure 4 = high) and Tags (emoji shortcodes, the class) as headers."""
    parts = channel.parts
    priority = {"failure": "4", "warning": "3", "ok": "2"}[summary.severity]
    tags = {"failure": "rotating_light", "warning": "warning", "ok": "white_check_mark"}[summary.severity]
    if summary.cls:
        tags += "," + re.sub(r"[^A-Za-z0-9_-]", "", summary.cls)
    headers = {"Title": _header_text(summary.title), "Priority": priority, "Tags": tags,
               "Content-Type": "text/plain; charset=utf-8"}
    auth = _ntfy_auth(parts)
    if auth:
        headers["Authorization"] = auth
    body = summary.text.encode("utf-8")[:4096].decode("utf-8", "ignore").encode("utf-8")
    return HttpRequest("POST", parts["endpoint"], headers, body)


def _ntfy_auth(parts):
    if parts.get("password") and parts.get("user"):
        return _basic_auth(parts["user"], parts["password"])
    token = parts.get("password") or parts.get("user")
    return ("Bearer " + token) if token else None


def build_gotify(channel, summary):
    """Gotify: POST /message with the app token in X-Gotify-Key; priority 0-10."""
    priority = {"failure": 8, "warning": 5, "ok": 2}[summary.severity]
    return _json_request(channel.parts["endpoint"], {
        "title": _fit(summary.title, 250), "message": _fit(summary.text, 8000),
        "priority": priority}, {"X-Gotify-Key": channel.parts["token"]})


def build_pushover(channel, summary):
    """Pushover: form fields token, user, title (<= 250), message (<= 1,024), priority."""
    from urllib.parse import urlencode
    fields = {"token": channel.parts["token"], "user": channel.parts["user"],
              "title": _fit(summary.title, 250), "message": _fit(summary.text, 1024),
              "priority": {"failure": "1", "warning": "0", "ok": "-1"}[summary.severity]}
    return HttpRequest("POST", channel.parts["endpoint"],
                       {"Content-Type": "application/x-www-form-urlencoded"},
                       urlencode(sorted(fields.items())).encode("ascii"))


def _html(text):
    """&, < and > escaped; quotes left as typed: chat bodies are text, not attribute values."""
    import html
    return html.escape(str(text), quote=False)


def build_telegram(channel, summary):
    """Telegram Bot API sendMessage: HTML text, 4,096 characters after entity parsing."""
    lines = ["<b>%s</b>" % _html(_fit(summary.title, 300))]
    lines += ["<b>%s:</b> %s" % (_html(k), _html(_fit(v, 1000))) for k, v in summary.fields
              if k != "Line"]
    if summary.evidence:
        lines.append("<pre>%s</pre>" % _html(_fit(summary.evidence, 1000)))
    text = "\n".join(lines)
    while len(text) > 4096 and len(lines) > 2:  # drop whole fields, never cut inside a tag
        lines.pop(-2)
        text = "\n".join(lines)
    return _json_request(channel.parts["endpoint"], {
        "chat_id": channel.parts["chat_id"], "text": text, "parse_mode": "HTML",
        "disable_web_page_preview": True})


def build_matrix(channel, summary, room_id, txn_id):
    """Matrix client-server API: PUT .../rooms/{roomId}/send/m.room.message/{txnId}; the
    same txnId on a retry lets the homeserver drop a duplicate."""
    html = "<b>%s</b><br>%s" % (_html(summary.title), "<br>".join(
        "<b>%s:</b> %s" % (_html(k), _html(v)) for k, v in summary.fields if k != "Line"))
    if summary.evidence:
        html += "<pre><code>%s</code></pre>" % _html(summary.evidence)
    # m.mentions {}: an intentional-mentions client pings nobody for a log line's @room or
    # a user id in it (without it, the body's text decides).
    content = {"msgtype": "m.text", "body": _fit(summary.title + "\n" + summary.text, 16000),
               "format": "org.matrix.custom.html", "formatted_body": _fit(html, 30000),
               "m.mentions": {}}
    url = "%s/_matrix/client/v3/rooms/%s/send/m.room.message/%s" % (
        channel.parts["base"], _quote(room_id), _quote(txn_id))
    req = _json_request(url, content, {"Authorization": "Bearer " + channel.parts["token"]})
    return req._replace(method="PUT")


def build_json(channel, summary, record=None):
    """json(s)://: the run record (run.json's content) with the title and severity."""
    payload = dict(record or {})
    payload.update({"title": summary.title, "severity": summary.severity, "text": summary.text})
    headers = {}
    if channel.parts.get("password") is not None or channel.parts.get("user"):
        headers["Authorization"] = _basic_auth(channel.parts.get("user"), channel.parts.get("password"))
    return _json_request(channel.parts["endpoint"], payload, headers)


PICTURE_NAME = "run.png"
#: Services that take a file: the picture of the run goes as a second, best-effort post.
PICTURE_SERVICES = ("discord", "telegram", "ntfy", "matrix")


def multipart_body(fields, files):
    """(Content-Type, body) of a multipart/form-data request (RFC 7578); fields are
    (name, text) pairs, files (name, filename, content type, bytes)."""
    boundary = "gpualert-" + os.urandom(12).hex()
    out = []
    for name, value in fields:
        out.append(("--%s\r\nContent-Disposition: form-data; name=\"%s\"\r\n\r\n" % (
            boundary, name)).encode("ascii") + str(value).encode("utf-8") + b"\r\n")
    for name, filename, ctype, data in files:
        out.append(("--%s\r\nContent-Disposition: form-data; name=\"%s\"; filename=\"%s\"\r\n"
                    "Content-Type: %s\r\n\r\n" % (boundary, name, filename, ctype)).encode("ascii")
                   + data + b"\r\n")
    out.append(("--%s--\r\n" % boundary).encode("ascii"))
    return "multipart/form-data; boundary=%s" % boundary, b"".join(out)


def build_picture_request(channel, summary, png):
    """The picture of the run as its own post (Discord file, Telegram sendPhoto, ntfy
    attachment); Matrix needs an upload first (see _post_matrix_picture)."""
    caption = _fit(summary.title, 200)
    if channel.service == "discord":
        ctype, body = multipart_body(
            [("payload_json", json_text({"content": _fit(caption, 2000), "allowed_mentions": {"parse": []}}))],
            [("files[0]", PICTURE_NAME, "image/png", png)])
        return HttpRequest("POST", channel.url, {"Content-Type": ctype}, body)
    if channel.service == "telegram":
        url = channel.parts["endpoint"].rsplit("/", 1)[0] + "/sendPhoto"
        ctype, body = multipart_body([("chat_id", channel.parts["chat_id"]), ("caption", caption)],
                                     [("photo", PICTURE_NAME, "image/png", png)])
        return HttpRequest("POST", url, {"Content-Type": ctype}, body)
    headers = {"Filename": PICTURE_NAME, "Title": _header_text(summary.title),
               "Message": _header_text("curves of the run"), "Content-Type": "image/png"}
    auth = _ntfy_auth(channel.parts)
    if auth:
        headers["Authorization"] = auth
    return HttpRequest("PUT", channel.parts["endpoint"], headers, png)


def json_text(payload):
    return _json_body(payload).decode("utf-8")


_PAYLOAD_BUILDERS = {
    "slack": build_slack, "discord": build_discord, "teams": build_teams,
    "googlechat": build_googlechat, "mattermost": build_mattermost,
    "rocketchat": build_rocketchat, "ntfy": build_ntfy, "gotify": build_gotify,
    "pushover": build_pushover, "telegram": build_telegram,
}


def build_channel_request(channel, summary, record=None):
    """The one HTTP request a channel's service documents (not Matrix: see build_matrix)."""
    if channel.service == "json":
        return build_json(channel, summary, record)
    return _PAYLOAD_BUILDERS[channel.service](channel, summary)


def request_as_built(channel, summary, record=None, txn_id=None):
    """The request a post would send, to look at (Matrix's into a stand-in room: the real
    one is known only once the server has been asked)."""
    if channel.service == "matrix":
        return build_matrix(channel, summary, "!room:localhost", txn_id or "txn")
    return build_channel_request(channel, summary, record)


# ==== Edges: artifacts ====

def find_artifacts(cwd, globs, since, exclude=()):
    """Candidate artifact files (absolute paths) for the message; stat only, never reads content.

    With globs (relative to cwd, `**` allowed): every regular file they match. Without: files
    under cwd matching ARTIFACT_PATTERNS created or modified at/after `since`, skipping VCS,
    venv and cache folders, bounded by ARTIFACT_MAX_DEPTH/SCAN/FILES. Paths under `exclude`
    (the run dir, the log dir) are left out. The list's .truncated is True if a bound was hit.
    """
    skip = [os.path.realpath(p) for p in exclude if p]
    if not cwd or not os.path.isdir(cwd):
        return _ArtifactList()
    found = _glob_artifacts(cwd, globs) if globs else _scan_artifacts(cwd, since)
    out = _ArtifactList(p for p in found if not _is_under(os.path.realpath(p), skip))
    out.truncated, out.unreadable = found.truncated, found.unreadable
    return out


def _is_home(path):
    """The auto scan never looks at $HOME itself (kernel files, keys, everyone's results)."""
    try:
        return os.path.realpath(path) == os.path.realpath(os.path.expanduser("~"))
    except (OSError, ValueError):
        return True


def _glob_artifacts(cwd, globs):
    """Everything the globs name except folders (a dangling link or a FIFO is listed too, so
    the manifest can say why it was not attached)."""
    import glob
    out, seen, looked = _ArtifactList(), set(), 0
    for pattern in globs:
        full = os.path.join(cwd, os.path.expanduser(pattern))
        for path in glob.iglob(full, recursive=True):
            looked += 1
            if len(out) >= ARTIFACT_MAX_FILES or looked > 4 * ARTIFACT_MAX_SCAN:
                out.truncated = True
                return out
            path = os.path.abspath(path)
            if path not in seen and not os.path.isdir(path):
                seen.add(path)
                out.append(path)
    return out


def _scan_artifacts(cwd, since):
    """Breadth-first walk (shallow results first) with bounded depth, entries and results."""
    import itertools
    out, queue, scanned = _ArtifactList(), collections.deque([(cwd, 0)]), 0
    cutoff = (since or 0) - ARTIFACT_MTIME_SLACK_S
    while queue:
        folder, depth = queue.popleft()
        try:
            with os.scandir(folder) as it:
                entries = sorted(itertools.islice(it, ARTIFACT_MAX_SCAN - scanned + 1),
                                 key=lambda e: e.name)
        except OSError as exc:  # skipped, and said in the message (_collect_artifacts)
            out.unreadable += ("%s: %s" % (folder, exc.strerror or exc),)
            continue
        for entry in entries:
            scanned += 1
            if scanned > ARTIFACT_MAX_SCAN or len(out) >= ARTIFACT_MAX_FILES:
                out.truncated = True
                return out
            _consider_entry(entry, depth, cutoff, queue, out)
    return out


def _consider_entry(entry, depth, cutoff, queue, out):
    import fnmatch
    try:
        if entry.is_symlink():  # never follow: loops, and links to datasets/checkpoints
            return
        if entry.is_dir():
            if depth + 1 < ARTIFACT_MAX_DEPTH and entry.name not in ARTIFACT_SKIP_DIRS \
                    and not entry.name.startswith(".") and not entry.name.endswith(".egg-info"):
                queue.append((entry.path, depth + 1))
            return
        name = entry.name.lower()
        if not entry.is_file() or not any(fnmatch.fnmatchcase(name, p) for p in ARTIFACT_PATTERNS) \
                or name.startswith(".") or any(fnmatch.fnmatchcase(name, p) for p in ARTIFACT_SECRET_PATTERNS):
            return
        st = entry.stat()
        if st.st_uid != os.geteuid():  # another user's job wrote it: not ours to mail
            return
        if max(st.st_mtime, st.st_ctime) >= cutoff:
            out.append(os.path.abspath(entry.path))
    except OSError:
        pass


def newest_checkpoint(cwd, since, exclude=()):
    """The newest checkpoint-like file or folder under cwd written during the run (see
    find_checkpoints): {"path", "mtime", "size"} or None."""
    found = find_checkpoints(cwd, since, exclude)
    return max(found, key=lambda c: c["mtime"]) if found else None


def find_checkpoints(cwd, since, exclude=()):
    """Checkpoint-like files and folders under cwd written at/after `since`, as
    [{"path", "mtime", "size"}]. Bounded like find_artifacts; never follows links."""
    import fnmatch
    import itertools
    if not cwd or not os.path.isdir(cwd):
        return []
    skip = [os.path.realpath(p) for p in exclude if p]
    found, queue, scanned = [], collections.deque([(cwd, 0)]), 0
    while queue and scanned < CHECKPOINT_MAX_SCAN:
        folder, depth = queue.popleft()
        try:
            with os.scandir(folder) as it:  # a folder of a million files is not read whole
                entries = list(itertools.islice(it, CHECKPOINT_MAX_SCAN - scanned))
        except OSError:
            continue
        for entry in entries:
            scanned += 1
            try:
                if entry.is_symlink() or _is_under(os.path.realpath(entry.path), skip):
                    continue
                hit = any(fnmatch.fnmatchcase(entry.name.lower(), p) for p in CHECKPOINT_PATTERNS)
                if entry.is_dir() and hit and not re.search(r"\d", entry.name):
                    hit = False  # "checkpoints/", "ckpt/" hold checkpoints; "checkpoint-1200/" is one
                if entry.is_dir() and not hit:
                    if depth + 1 < ARTIFACT_MAX_DEPTH and entry.name not in ARTIFACT_SKIP_DIRS:
                        queue.append((entry.path, depth + 1))
                    continue
            except OSError:
                continue
            st = own_checkpoint(entry.path)[0] if hit else None
            # the ctime too: an mtime can be set (touch -d, cp -p), the ctime only moves forward
            if st and written_since(st.st_mtime, since) and written_since(st.st_ctime, since):
                found.append(_checkpoint_record(entry.path, st))
    return found


def run_dir_names(log_dir, warn=None):
    """The entries of log_dir that can be run directories: directories, never a link (links
    planted in a shared --log-dir to one run of ours would count it many times), not the
    outbox, not dot files (prune's staging names among them). One warn() line when log_dir
    is there but cannot be listed (none there: no runs yet), or is reached through another
    user's link."""
    planted = foreign_link(log_dir)
    if planted:
        if warn:
            warn("warning: " + planted)
        return []
    try:
        with os.scandir(log_dir) as entries:  # the kind comes with the listing: no stat each
            names = [e.name for e in entries if _is_real_dir(e)]
    except OSError as exc:
        if warn and exc.errno != errno.ENOENT:
            warn("warning: cannot list %s: %s" % (log_dir, exc.strerror or exc))
        return []
    return sorted(n for n in names if not n.startswith(".") and n != "outbox")


def _is_real_dir(entry):
    try:
        return entry.is_dir(follow_symlinks=False)
    except OSError:
        return False


def other_runs_cwds(run_dir, since):
    """The working directories of the other runs in run_dir's log directory whose log was
    written to since `since` (they ran beside this one), the ranks of this run's own
    scheduler job left out: a checkpoint under one of them may be theirs."""
    log_dir, mine = os.path.dirname(run_dir), _run_header(run_dir)
    out = []
    for name in run_dir_names(log_dir):
        path = os.path.join(log_dir, name)
        if os.path.realpath(path) == os.path.realpath(run_dir) or not _log_written_since(path, since):
            continue
        theirs = _run_header(path)
        same_job = mine.get("job") and theirs.get("job") == mine["job"]
        if not same_job:
            out.append(os.path.realpath(theirs.get("cwd") or "/"))  # a header unread: it may be anywhere
    return out


def _log_written_since(run_dir, since):
    try:
        return any(name.startswith("output") and written_since(
            os.stat(os.path.join(run_dir, name)).st_mtime, since) for name in os.listdir(run_dir))
    except OSError:
        return False


def _run_header(run_dir):
    """{"cwd", "job"} from a run's log header (the scheduler's job id: "" outside a job)."""
    try:
        name = min(n for n in os.listdir(run_dir) if n.startswith("output") and n.endswith(".log"))
        with open(os.path.join(run_dir, name), "rb") as handle:
            head = handle.read(8192).decode("utf-8", "replace")
    except (OSError, ValueError):
        return {}
    cwd = re.search(r"^cwd: (.*)$", head, re.M)
    job = re.search(r"^scheduler: .*?\bjob_id=(\S+)", head, re.M)
    return {"cwd": cwd and cwd.group(1), "job": job and job.group(1)}


def written_since(mtime, since):
    """True when a file's mtime falls in the run. No slack that reaches into the job before
    (a checkpoint it wrote a second before our start is not ours); a whole-second mtime
    (FAT, some NFS round down) counts from the start's second."""
    since = since or 0
    return mtime >= since or (mtime == int(mtime) and mtime >= int(since))


def own_checkpoint(path, now=None):
    """(stat, None) when `path` may be offered as a checkpoint, else (None, why): a regular
    file or a folder (HF's checkpoint-N/) owned by the user running gpualert, not dated in
    the future, reached through no link owned by anyone but that user or root. In a
    directory others can write to, the owner check is what stops a file they planted."""
    try:
        link, st = _walk_links(os.path.abspath(path))
    except OSError as exc:
        return None, "cannot be checked (%s)" % (exc.strerror or exc)
    if link:
        return None, "is reached through %s, a link owned by uid %d" % link
    if not (stat.S_ISREG(st.st_mode) or stat.S_ISDIR(st.st_mode)):
        return None, "is not a regular file or folder"
    if st.st_uid != os.geteuid():
        return None, "is not yours (owned by uid %d)" % st.st_uid
    ahead = st.st_mtime - (now or time.time())
    if ahead > CHECKPOINT_FUTURE_S:
        return None, "is dated in the future (%s ahead)" % format_duration(ahead)
    return st, None


def _walk_links(path):
    """-> ((link, uid) of the first link on the way to absolute `path` owned by neither this
    user nor root, or None; the lstat of where it leads). Each component is lstat'ed and a
    link followed as the kernel would, so a link in its target counts too."""
    me, parts, here, hops = os.geteuid(), path.split("/"), "/", 0
    st = os.lstat("/")
    while parts:
        name = parts.pop(0)
        if name in ("", "."):
            continue
        step = os.path.dirname(here) if name == ".." else os.path.join(here, name)
        st = os.lstat(step)
        if not stat.S_ISLNK(st.st_mode):
            here = step
            continue
        if st.st_uid not in (me, 0):
            return (step, st.st_uid), st
        hops += 1
        if hops > 40:
            raise OSError(errno.ELOOP, os.strerror(errno.ELOOP))
        target = os.readlink(step)
        parts[:0] = target.split("/")
        here = "/" if target.startswith("/") else here
    return None, st


def foreign_link(path):
    """Why the directory at `path` is not to be used as ours: the first link on its way owned
    by neither this user nor root (planted in a shared folder, it sends what is written, read
    or removed there to where its owner chose), or None."""
    try:
        link = _walk_links(os.path.abspath(path))[0]
    except OSError:  # a part missing: any link before it was checked; the caller's error says the rest
        return None
    return link and "%s is reached through %s, a link owned by uid %d: refused" % (path, link[0], link[1])


def pin_checkpoint(ckpt, run_dir):
    """(the path the job is to open the checked checkpoint by, None) or (None, why not). Its
    own path where nobody else can change what it names; else, in a folder others may write
    to, a hard link in our private run directory, checked to be the file recorded: whatever
    they swap in at the path after our check, before the job opens it, is not what it
    opens. A folder (HF's checkpoint-N/) cannot be linked: it is given by its path."""
    path = ckpt["path"]
    if os.path.isdir(path) or not _others_may_rename(path):
        return path, None
    pinned = os.path.join(run_dir, "resume", os.path.basename(path))
    if _others_may_rename(os.path.dirname(pinned)):  # a --log-dir others may write to: the pin
        # could be swapped too (our run directory renamed away, another put at its name)
        return None, ("lies in a folder others may write to, and so does the log directory %s, "
                      "where it would be pinned: keep checkpoints, or --log-dir, in a folder only "
                      "you can write" % os.path.dirname(run_dir))
    try:
        os.makedirs(os.path.dirname(pinned), 0o700, exist_ok=True)
        # link(2) does not follow a link: a link of ours (Lightning's last.ckpt) pins what it names
        os.link(os.path.realpath(path), pinned)
    except OSError as exc:
        return None, ("lies in a folder others may write to and cannot be pinned in %s (%s): keep "
                      "checkpoints in a folder only you can write" % (run_dir, exc.strerror or exc))
    st = os.lstat(pinned)
    if (st.st_ino, st.st_size, st.st_mtime, st.st_uid) != (ckpt.get("ino"), ckpt.get("size"),
                                                           ckpt.get("mtime"), os.geteuid()):
        os.unlink(pinned)
        return None, "was swapped while gpualert pinned it"
    return pinned, None


def _others_may_rename(path):
    """May anyone but us (and root) rename or replace what `path` names: a folder on its way
    that is theirs, or that group or others may write to without the sticky bit?"""
    folder, me = os.path.dirname(os.path.realpath(path)), os.geteuid()
    while True:
        st = os.stat(folder)
        if st.st_uid not in (me, 0) or (st.st_mode & 0o022 and not st.st_mode & stat.S_ISVTX):
            return True
        if folder == os.path.dirname(folder):
            return False
        folder = os.path.dirname(folder)


def _checkpoint_record(path, st):
    """What a checkpoint was when chosen: the next attempt resumes it only while it still is
    (resume_refusal). Its device too, though only the same host compares it."""
    return {"path": os.path.abspath(path), "mtime": st.st_mtime,
            "size": st.st_size if stat.S_ISREG(st.st_mode) else None,
            "ino": st.st_ino, "dev": st.st_dev}


def resume_refusal(ckpt, same_host):
    """Why the checkpoint an earlier attempt recorded (resume_checkpoint) may not be
    GPUALERT_RESUME now, or None: it passes own_checkpoint again and is still the file
    recorded (size, mtime, inode; the device only on the same host: an NFS or Lustre
    mount's number differs from node to node)."""
    st, why = own_checkpoint(ckpt["path"])
    if why:
        return "%s %s" % (ckpt["path"], why)
    now = _checkpoint_record(ckpt["path"], st)
    changed = [word for word, keys in (("size", ("size",)), ("mtime", ("mtime",)),
                                       ("inode", ("ino", "dev") if same_host else ("ino",)))
               if any(now[k] != ckpt.get(k) for k in keys)]
    if changed:
        return "%s changed since attempt %s recorded it (%s)" % (
            ckpt["path"], ckpt.get("attempt") or "?", "/".join(changed))
    return None


def named_checkpoints(saved, cwd, since):
    """The checkpoints the log says it saved ([{"path", "after_nonfinite"}], relative to
    cwd), that exist and were written during the run: records as find_checkpoints gives,
    plus "named" and "after_nonfinite"."""
    out = []
    for item in saved or ():
        path = os.path.join(cwd or "", os.path.expanduser(item["path"]))
        st = own_checkpoint(path)[0]
        if st and written_since(st.st_mtime, since):
            record = _checkpoint_record(path, st)
            record.update(named=True, after_nonfinite=item.get("after_nonfinite", False))
            out.append(record)
    return out


_NAME_STEP_RE = re.compile(r"(?:step|iter|checkpoint|ckpt|global_step)[-_=]?(\d+)(?!.*\d)", re.I)


def choose_checkpoint(candidates, metrics, signals=()):
    """The checkpoint to offer, from this run's candidates (found and named; the named only,
    when the log named any that exist): the newest, or after a non-finite loss the newest
    written before it, with "later_nonfinite" counting those skipped; "answer": the first
    written after a forwarded warning signal (SIGUSR1/USR2/TERM), which the job wrote in
    answer to it. None when there is none."""
    by_path = {}
    for c in sorted(candidates, key=lambda c: not c.get("named")):  # a named one's facts win
        by_path.setdefault(os.path.realpath(c["path"]), dict(c))
    found = sorted(by_path.values(), key=lambda c: c["mtime"])
    # the log's own saves beat the scan: a file in a shared directory that it does not name
    # may be another run's (array tasks in one working directory)
    found = [c for c in found if c.get("named")] or found
    if not found:
        return None
    bad = (metrics or {}).get("first_nonfinite")
    if bad:
        for c in found:
            c["after_nonfinite"] = c.get("after_nonfinite") or _saved_after_step(c["path"], bad)
    good = [c for c in found if not c.get("after_nonfinite")]
    best = dict(good[-1]) if good else {"path": None}
    if bad and len(good) < len(found):
        best["later_nonfinite"] = len(found) - len(good)
    warned = [at for name, at, _ in signals or () if name in ("SIGUSR1", "SIGUSR2", "SIGTERM")]
    # a file's time comes from the kernel's coarse clock, up to a tick (4-10 ms) behind
    # time.time(): a save made at once in answer may carry a time just before the signal's
    answer = [c for c in found if warned and c["mtime"] >= warned[0] - FILE_CLOCK_TICK_S]
    if answer:
        best["answer"] = {"path": answer[0]["path"], "mtime": answer[0]["mtime"]}
    best.pop("named", None)
    best.pop("after_nonfinite", None)
    return best


def _saved_after_step(path, bad):
    """A checkpoint named for a step past the first non-finite loss's step (checkpoint-400
    after a NaN at step 340) was saved after it. transformers 5 logs no step, only an epoch:
    its checkpoint-N/trainer_state.json says the epoch it was saved at (a save at the very
    step of the NaN comes after that step's log)."""
    m = _NAME_STEP_RE.search(os.path.basename(path.rstrip("/")))
    if m and bad.get("step") is not None:
        return int(m.group(1)) > bad["step"]
    if bad.get("epoch") is None or not os.path.isdir(path):
        return False
    import json
    try:
        with open(os.path.join(path, "trainer_state.json")) as handle:
            epoch = json.loads(handle.read(1 << 20)).get("epoch")
    except (OSError, ValueError, AttributeError):
        return False
    return isinstance(epoch, (int, float)) and epoch >= bad["epoch"]


def own_rss_kib():
    """This process's resident memory now (KiB, /proc/self/status VmRSS), or None. A child's
    ru_maxrss starts from it: fork copies it, and exec keeps the high-water mark."""
    with open("/proc/self/status") as handle:
        for line in handle:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return None


def job_output_file():
    """The regular file this process's stdout goes to (sbatch's slurm-%j.out), else None."""
    try:
        path = os.readlink("/proc/self/fd/1")
        return path if path.startswith("/") and os.path.isfile(path) else None
    except OSError:
        return None


JOB_OUTPUT_COUNT_MAX_BYTES = 64 * 1024 * 1024  # a bigger output file is not counted through


def job_output_map(mark, header_lines, total_lines):
    """How the log's lines header_lines+1..total_lines map to the job output file's:
    {"offset", "first", "last"}, when stdout is still the file marked at the start."""
    st = os.fstat(1)
    if not mark or (st.st_dev, st.st_ino) != mark[:2]:
        return None
    lines, left = 0, mark[2]
    with open(job_output_file(), "rb") as handle:
        while left > 0:
            block = handle.read(min(left, 1 << 20))
            if not block:
                break
            lines, left = lines + block.count(b"\n"), left - len(block)
    return {"offset": lines - header_lines, "first": header_lines + 1, "last": total_lines}


# ==== Edges: attachment planning (sizes read from disk) ====

def _attach_cost(nbytes, filename):
    """Serialized size of one base64 attachment part: 4/3, CRLF every 76 chars, headers."""
    b64 = 4 * ((nbytes + 2) // 3)
    return b64 + 2 * ((b64 + 75) // 76) + PART_OVERHEAD_BYTES + 6 * len(filename.encode("utf-8"))


def _raw_capacity(allowance, filename):
    """The most raw bytes whose attachment part fits in `allowance` serialized bytes."""
    fixed = PART_OVERHEAD_BYTES + 6 * len(filename.encode("utf-8"))
    if allowance <= fixed + 8:
        return 0
    n = int((allowance - fixed) * 3 * 76 / (4.0 * 78))
    while n > 0 and _attach_cost(n, filename) > allowance:
        n -= 3
    return max(0, n)


def _row(path, base, kind):
    if base and path and _is_under(os.path.abspath(path), [os.path.abspath(base)]):
        name = os.path.relpath(path, base)
    else:
        name = path or "-"
    return {"name": name, "path": path, "size": None, "disposition": "", "kind": kind}


def _item(filename, data, rows):
    import mimetypes
    filename = _clean(filename, 200) or "file"
    ctype = mimetypes.guess_type(filename)[0] or "application/octet-stream"
    if filename.lower().endswith(TEXT_ATTACHMENT_SUFFIXES):
        ctype = "text/plain"  # mail clients show text/plain inline; .log/.jsonl are unknown types
    if filename.endswith(".gz"):
        ctype = "application/gzip"
    maintype, subtype = ctype.split("/", 1)
    return {"filename": filename, "data": data, "maintype": maintype, "subtype": subtype,
            "cost": _attach_cost(len(data), filename), "rows": rows}


TEXT_ATTACHMENT_SUFFIXES = (".log", ".jsonl", ".out", ".err", ".txt", ".excerpt.txt", ".tsv",
                            ".yaml", ".yml", ".cfg", ".ini", ".toml", ".md")


def _read_at_most(path, size):
    with open(path, "rb") as f:
        return f.read(size)


def plan_attachments(log_path, artifacts, budget, base=None):
    """Decide what to attach within `budget` serialized bytes (attachment parts only).

    Returns (plan, manifest). plan: list of dicts {filename, data, maintype, subtype, cost, rows}.
    manifest: one dict {name, path, size, disposition, kind} per candidate (the log first), so
    nothing is dropped silently. Sizes come from stat before any file is opened; a file is read
    only when its stat size says it can fit. The log is always represented: whole, gzip'd,
    or a head+tail excerpt naming the full path.
    """
    budget = max(0, int(budget))
    infos, art_rows = _stat_artifacts(artifacts, base)
    small = [_attach_cost(s, os.path.basename(p)) for s, p, r in infos[:ATTACH_MAX_FILES]]
    reserve = min(sum(c for c in small if c <= budget), budget // 2)
    log_item, log_row = _plan_log(log_path, budget - reserve, base)
    plan = [log_item] if log_item else []
    left = budget - (log_item["cost"] if log_item else 0)
    plan.extend(_plan_files(infos, left))
    manifest = ([log_row] if log_row else []) + art_rows
    if getattr(artifacts, "truncated", False):
        note = _row(None, None, "note")
        note.update(name="(more files)", disposition="not listed: artifact search stopped at "
                    "%d files / %d entries" % (ARTIFACT_MAX_FILES, ARTIFACT_MAX_SCAN))
        manifest.append(note)
    return plan, manifest


def _stat_artifacts(paths, base):
    """[(size, path, row)] sorted by size for regular files; rows for all, in input order."""
    infos, rows = [], []
    for path in paths or ():
        row = _row(path, base, "artifact")
        rows.append(row)
        try:
            st = os.stat(path)
        except OSError as exc:
            row["disposition"] = "unreadable: %s" % (exc.strerror or exc)
            continue
        row["size"] = st.st_size
        if not stat.S_ISREG(st.st_mode):
            row["disposition"] = "not a regular file"
            continue
        infos.append((st.st_size, path, row))
    infos.sort(key=lambda t: (t[0], t[1]))
    return infos, rows


def _plan_log(log_path, allowance, base):
    if not log_path:
        return None, None
    row = _row(log_path, base, "log")
    try:
        row["size"] = os.stat(log_path).st_size
        return _log_item(log_path, row["size"], allowance, row), row
    except OSError as exc:
        row["disposition"] = "unreadable: %s (the last lines are in the body)" % (
            exc.strerror or exc)
        return None, row


def _log_item(path, size, allowance, row):
    name = os.path.basename(path) or "job.log"
    if size <= ATTACH_FILE_MAX_BYTES and _attach_cost(size, name) <= allowance:
        row["disposition"] = "attached"
        return _item(name, _read_at_most(path, size), [row])
    cap = _raw_capacity(allowance, name + ".gz")
    if cap >= 1024 and size <= min(GZIP_MAX_INPUT_BYTES, GZIP_MAX_RATIO * cap):
        data = _gzip_bounded(path, size, cap)
        if data is not None:
            row["disposition"] = "attached gzip-compressed as %s.gz (%s)" % (
                name, _format_size(len(data)))
            return _item(name + ".gz", data, [row])
    cap = _raw_capacity(allowance, name + ".excerpt.txt")
    if cap < 1024 + len(path.encode("utf-8")):
        row["disposition"] = "budget exhausted: %s (not attached; last lines in the body)" % path
        return None
    row["disposition"] = "excerpt attached (head+tail) as %s.excerpt.txt; full log: %s" % (
        name, path)
    return _item(name + ".excerpt.txt", _log_excerpt(path, size, cap), [row])


def _gzip_bounded(path, size, cap):
    """gzip the first `size` bytes of path in 1 MiB chunks; None as soon as it exceeds cap."""
    import gzip
    buf = io.BytesIO()
    gz = gzip.GzipFile(filename="", mode="wb", fileobj=buf, compresslevel=6, mtime=0)
    with open(path, "rb") as src:
        left = size
        while left > 0:
            chunk = src.read(min(1 << 20, left))
            if not chunk:
                break
            left -= len(chunk)
            gz.write(chunk)
            if buf.tell() > cap:
                return None
    gz.close()
    data = buf.getvalue()
    return data if len(data) <= cap else None


def _log_excerpt(path, size, cap):
    """Head and tail of the log, cut at line breaks, with a marker naming the full log."""
    room = cap - 300 - len(path.encode("utf-8"))
    head_n = min(LOG_EXCERPT_HEAD_BYTES, room // 4)
    tail_n = room - head_n
    with open(path, "rb") as f:
        head = f.read(head_n)
        f.seek(max(len(head), size - tail_n))
        tail = f.read(tail_n)
    if b"\n" in head:
        head = head[:head.rindex(b"\n") + 1]
    if b"\n" in tail[:-1]:
        tail = tail[tail.index(b"\n") + 1:]
    omitted = max(0, size - len(head) - len(tail))
    marker = "\n[... gpualert: %d bytes omitted here; the full log is %s ...]\n\n" % (
        omitted, path)
    return head + marker.encode("utf-8", "replace") + tail


def _plan_files(infos, allowance):
    """Attach the smallest files individually; the overflow goes into one zip."""
    items, overflow, used = [], [], set()
    for size, path, row in infos:
        name = _unique_name(os.path.basename(path), used)
        cost = _attach_cost(size, name)
        if len(items) >= ATTACH_MAX_FILES or cost > allowance or size > ATTACH_FILE_MAX_BYTES:
            used.discard(name)
            overflow.append((size, path, row))
            continue
        try:
            data = _read_at_most(path, size)
        except OSError as exc:
            used.discard(name)
            row["disposition"] = "unreadable: %s" % (exc.strerror or exc)
            continue
        row["disposition"] = "attached" + ("" if name == os.path.basename(path)
                                           else " as %s" % name)
        items.append(_item(name, data, [row]))
        allowance -= items[-1]["cost"]
    zipped = _plan_zip(overflow, allowance)
    return items + ([zipped] if zipped else [])


def _unique_name(name, used):
    stem, ext = os.path.splitext(name or "file")
    candidate, n = name or "file", 1
    while candidate in used:
        n += 1
        candidate = "%s-%d%s" % (stem, n, ext)
    used.add(candidate)
    return candidate


def _plan_zip(overflow, allowance):
    cap = _raw_capacity(allowance, "artifacts.zip")
    members = []
    for size, path, row in overflow:
        if len(members) >= ZIP_MAX_MEMBERS:
            row["disposition"] = "over file count limit (%d attached + %d zipped)" % (
                ATTACH_MAX_FILES, ZIP_MAX_MEMBERS)
        elif size > ZIP_MEMBER_MAX_BYTES:
            row["disposition"] = "too large: %s" % path
        elif cap < 1024 or size > 20 * cap:
            row["disposition"] = "budget exhausted: %s" % path
        else:
            members.append((size, path, row))
    if not members:
        return None
    data, rows = _build_zip(members, cap)
    return _item("artifacts.zip", data, rows) if rows else None


def _build_zip(members, cap):
    """Add members while the archive stays under cap. Each file is first deflated in 1 MiB
    chunks to measure it, then streamed in: memory stays at the archive's size, whatever
    the files' sizes (a 60 MiB artifact that cannot fit is never held in memory)."""
    import zipfile
    buf, rows = io.BytesIO(), []
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for size, path, row in members:
            room = cap - buf.tell() - 22 - 60 * (len(rows) + 1) - 2 * (len(row["name"].encode("utf-8")) + 80)
            try:
                fits = _deflated_size(path, room) <= room
                if fits:
                    _zip_member(zf, path, row["name"].replace(os.sep, "/").lstrip("/"))
            except OSError as exc:
                row["disposition"] = "unreadable: %s" % (exc.strerror or exc)
                continue
            if not fits:
                row["disposition"] = "budget exhausted: %s" % path
                continue
            row["disposition"] = "in zip (artifacts.zip)"
            rows.append(row)
    data = buf.getvalue()
    if len(data) > cap:
        for row in rows:
            row["disposition"] = "budget exhausted: %s" % row["path"]
        return data, []
    return data, rows


def _zip_member(zf, path, arcname):
    """Stream a file into the archive. Zip dates start in 1980: older mtimes (cp -p, tar x of
    old data) are clamped instead of failing the whole message."""
    import shutil
    import zipfile
    st = os.stat(path)
    stamp = tuple(time.localtime(st.st_mtime)[:6])
    info = zipfile.ZipInfo(arcname, max(stamp, (1980, 1, 1, 0, 0, 0)))
    info.compress_type = zipfile.ZIP_DEFLATED
    info.external_attr = (st.st_mode & 0xFFFF) << 16
    with open(path, "rb") as src, zf.open(info, "w") as dst:
        shutil.copyfileobj(src, dst, 1 << 20)


def _deflated_size(path, limit):
    """Deflated size of a file, read in 1 MiB chunks; stops counting once over `limit`."""
    import zlib
    packer, total = zlib.compressobj(6, zlib.DEFLATED, -15), 0
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            total += len(packer.compress(chunk))
            if total > limit:
                return total
    return total + len(packer.flush())


# ==== Edges: the message (MIME parts, attachments read from disk) ====

def build_message(result, cfg):
    """(EmailMessage, manifest) for a RunResult. Never raises: any internal error gives a
    minimal text message that says so. The serialized message stays within cfg budget."""
    try:
        return _build_full(result, cfg)
    except Exception as exc:  # a rendering bug must not cost the user the notification
        return _build_minimal(result, cfg, exc), []


def _build_full(result, cfg):
    budget = int(cfg.get("budget") or MAIL_BUDGET_BYTES)
    artifacts, note = _collect_artifacts(result, cfg)
    result = _with_note(result, note)
    picture = None if cfg.get("no_plots") else _safely(
        lambda: render_plot(result.metrics, result.gpu)[0], None)
    probe = [{"name": "x" * 50, "size": 0, "disposition": "y" * 90, "path": None}] * (
        len(artifacts) + 2)
    body_cost = _wire_size(_assemble(result, cfg, [], probe, picture=picture))
    if budget - body_cost < HTML_ROOM_BYTES:  # a small budget goes to the files, not to the HTML
        body_cost = _wire_size(_assemble(result, cfg, [], probe, html=False))  # copy of the text
    body_cost += BODY_SAFETY_BYTES
    log_path = None if result.status == "TEST" else result.log_path
    plan, manifest = plan_attachments(log_path, artifacts, budget - body_cost, base=result.cwd)
    msg = _fit_budget(result, cfg, plan, manifest, budget, picture=picture)
    msg.gpualert_slim = lambda reason: _slim_rebuild(result, cfg, manifest, reason, msg)
    return msg, manifest


def _collect_artifacts(result, cfg):
    """-> (artifact paths, None) or ([], a note saying why discovery failed)."""
    if result.status in ("TEST", "STALLED") or result.array or result.digest:
        return [], None
    asked = list(cfg.get("artifacts") or ())
    if not asked:  # the log only, unless asked: never other people's files, never secrets
        return [], None
    skip = [result.run_dir, os.path.dirname(result.log_path or "")]
    globs = [g for g in asked if g != "auto"]
    try:
        found = find_artifacts(result.cwd, globs, result.start, skip) if globs else _ArtifactList()
        if "auto" in asked and not _is_home(result.cwd):
            scanned = find_artifacts(result.cwd, (), result.start, skip)
            found += [p for p in scanned if p not in found]
            found.unreadable += scanned.unreadable
            found.truncated = found.truncated or scanned.truncated
    except Exception as exc:  # discovery is best effort; the log and the body still go out
        return [], "artifact discovery failed (%s); no artifacts attached" % _describe(exc)
    if found.unreadable:
        return found, "artifact search could not read %d folder(s): %s" % (
            len(found.unreadable), "; ".join(found.unreadable[:3]))
    return found, None


def _assemble(result, cfg, plan, manifest, *, html=True, picture=None):
    """The message: text, HTML (with the picture as an inline multipart/related image),
    then the attachments. Mail clients show a cid: image; Gmail blocks data: URIs."""
    from email.message import EmailMessage
    from email.utils import make_msgid
    msg = EmailMessage()
    _set_headers(msg, result, cfg)
    msg.set_content(render_text(result, manifest), subtype="plain", cte="quoted-printable")
    if html:
        cid = make_msgid("plot", domain=_hostname()) if picture else None
        msg.add_alternative(render_html(result, manifest, cid and cid[1:-1]), subtype="html",
                            cte="quoted-printable")
        if picture:
            msg.get_payload()[1].add_related(picture, maintype="image", subtype="png", cid=cid,
                                             filename="run.png", disposition="inline")
    for it in plan:
        msg.add_attachment(it["data"], maintype=it["maintype"], subtype=it["subtype"],
                           filename=it["filename"])
    _unfolded_headers(msg)
    return msg


def _unfolded_headers(msg):
    """The top-level headers are written unfolded up to 998 characters (RFC 5322's hard
    limit; the subject is at most SUBJECT_MAX_CHARS). Python folds a 70-77 character
    subject as an empty first line followed by the whole value, which some clients show
    as an empty subject. The body parts keep their own policy: QP and base64 stay at 76."""
    msg.policy = msg.policy.clone(max_line_length=998)


def _fit_budget(result, cfg, plan, manifest, budget, *, picture=None):
    """Assemble; while over budget leave out what matters least first: the picture, then the
    HTML part (the plain text says the same), then the biggest attachment (saying so), then
    lines of the body."""
    plan = list(plan)
    lighter = [(True, picture), (True, None), (False, None)][0 if picture else 1:]
    for html, pic in lighter:
        msg = _assemble(result, cfg, plan, manifest, html=html, picture=pic)
        if _wire_size(msg) <= budget:
            return msg
    while plan:
        victim = max(plan, key=lambda it: it["cost"])
        plan.remove(victim)
        for row in victim["rows"]:
            row["disposition"] = "budget exhausted: %s (dropped to keep the message under %s)" % (
                row["path"], _format_size(budget))
        msg = _assemble(result, cfg, plan, manifest, html=False)
        if _wire_size(msg) <= budget:
            return msg
    return _fit_tail(result, cfg, manifest, budget)


def _fit_tail(result, cfg, manifest, budget):
    """Only tiny budgets get here: the message with the most last lines of output that fit
    (a binary search: its size grows with the lines kept), or with none."""
    lo, hi, best = 1, len(result.tail or []) - 1, None  # all of them did not fit
    while lo <= hi:
        keep = (lo + hi) // 2
        msg = _assemble(_thinned(result, keep, budget, manifest), cfg, [], manifest, html=False)
        if _wire_size(msg) <= budget:
            best, lo = msg, keep + 1
        else:
            hi = keep - 1
    return best or _assemble(_thinned(result, 0, budget, manifest), cfg, [], manifest, html=False)


def _thinned(result, keep, budget, manifest):
    """The result with only its last `keep` lines of output, saying so and where the log is;
    with none left, the manifest no longer promises lines the body does not have."""
    tail = list(result.tail or [])
    if len(tail) <= keep:
        return result
    shown = "only the last %d lines" % keep if keep else "none of the last lines"
    note = "%s of output fit the %s message budget; the whole log: %s" % (
        shown, _format_size(budget), result.log_path)
    if not keep:
        for row in manifest:
            row["disposition"] = re.sub(r"(?:the )?last lines (?:are )?in the body",
                                        "no room for its last lines in the body either",
                                        row["disposition"])
    return _with_note(result._replace(tail=tail[-keep:] if keep else []), note)


def new_message_id():
    from email.utils import make_msgid
    return make_msgid("gpualert", domain=_hostname())  # domain given: no DNS lookup


def _set_headers(msg, result, cfg):
    from email.utils import formatdate
    host = _hostname()
    c = _classification(result)
    msg["From"] = _from_addr(cfg, host)
    msg["To"] = ", ".join(_recipients(cfg))
    msg["Subject"] = render_subject(result)
    msg["Date"] = formatdate(localtime=True)
    msg["Message-ID"] = new_message_id()
    msg["Auto-Submitted"] = "auto-generated"
    msg["X-Gpualert-Status"] = _clean(result.status, 20) or "UNKNOWN"
    msg["X-Gpualert-Class"] = _clean(c.cls, 40) or "none"
    if _job_label(result.scheduler):
        msg["X-Gpualert-Job"] = _job_label(result.scheduler)
    if result.run_dir:
        msg["X-Gpualert-Run-Dir"] = _clean(result.run_dir, 500)


def set_thread(msg, message_id, earlier):
    """Make msg one message of a run's thread: its Message-ID, and In-Reply-To/References to
    the run's earlier messages (WARNING, STALLED), so mail clients group them."""
    msg.replace_header("Message-ID", message_id)
    for name, value in (("In-Reply-To", earlier[-1:]), ("References", earlier)):
        if name in msg:
            del msg[name]
        if value:
            msg[name] = " ".join(value)
    msg.gpualert_bytes = None  # serialized before: sized again with the new headers


def own_ctrl_c(status, signals, interactive):
    """True when the run ended because the person at its terminal pressed Ctrl-C: an
    INTERRUPTED run whose only stop signal is a SIGINT the terminal (the kernel) sent."""
    stops = [(name, sender) for name, _, sender in signals or () if name in STOP_SIGNALS]
    return bool(interactive and status == "INTERRUPTED" and stops
                and all(s == ("SIGINT", "kernel") for s in stops))


def warning_signal_note(signals, checkpoint, withheld=()):
    """What the job did after a forwarded warning signal (--signal=B:USR1@120), from the
    newest checkpoint's time: a line for the final message, or None. withheld: the warning
    signals no process of the command catches, so not passed on (SignalRelay._pass_warning)."""
    warned = [(name, at) for name, at, _ in signals or () if name in WARNING_SIGNALS]
    if not warned:
        return None
    name, at = warned[0]
    when = time.strftime("%H:%M:%S", time.localtime(at))
    if name in (withheld or ()):
        return ("%s at %s was not passed on: no process of the command catches it, and it would "
                "have died of it (a handler that checkpoints gets it)" % (name, when))
    note = "%s at %s was passed on to the job" % (name, when)
    # choose_checkpoint's answer: the first written after it (within the file clock's tick:
    # a save made at once may carry a time just before the signal's), not a later save
    answer = (checkpoint or {}).get("answer")
    if answer and answer.get("mtime"):
        return note + "; it then wrote %s at %s" % (
            answer["path"], time.strftime("%H:%M:%S", time.localtime(answer["mtime"])))
    return note + "; no checkpoint was written after it"


def _from_addr(cfg, host):
    if _first_line(cfg.get("from_addr")):
        return _first_line(cfg["from_addr"])
    import getpass
    try:
        user = re.sub(r"[^A-Za-z0-9._+-]", "", getpass.getuser()) or "gpualert"
    except Exception:
        user = "gpualert"
    return "gpualert <%s@%s>" % (user, host)


def _first_line(value, limit=300):
    """An address with a CR/LF in it is cut there: what follows would be a new header."""
    return _clean(re.split(r"[\r\n]", str(value or ""), maxsplit=1)[0], limit)


def _recipients(cfg):
    to = cfg.get("to") or []
    if isinstance(to, str):
        to = to.split(",")
    out = _one_per_mailbox([_first_line(a) for a in to if _first_line(a)])
    if not out:  # like Slurm's --mail-user default: the submitting user, delivered locally
        import getpass
        try:
            out = [getpass.getuser()]
        except Exception:
            out = ["root"]
    return out


def _one_per_mailbox(addresses):
    """The first of each mailbox: 'Ok <ok@x>', ok@X and ok@x are one (a domain's case never
    matters; the local part's may, so it is kept as written)."""
    from email.utils import parseaddr
    seen, out = set(), []
    for address in addresses:
        box = parseaddr(address)[1] or address
        local, at, domain = box.rpartition("@")
        key = (local, domain.lower()) if at else (box, "")
        if key not in seen:
            seen.add(key)
            out.append(address)
    return out


def _wire_size(msg):
    """Size as sent over SMTP (CRLF line ends)."""
    data = _wire_bytes(msg)
    return len(data) + data.count(b"\n") - data.count(b"\r\n")


def _wire_bytes(msg):
    """msg.as_bytes(), once: a message with a 5 MiB log takes a noticeable time to serialize,
    and sizing and sending need the same bytes (messages are not changed once assembled)."""
    data = getattr(msg, "gpualert_bytes", None)
    if data is None:
        data = msg.as_bytes()
        msg.gpualert_bytes = data
    return data


def _slim_rebuild(result, cfg, manifest, reason, original):
    """The same message without attachments; every file row says why."""
    rows = []
    for row in manifest:
        row = dict(row)
        if row["path"] and row["disposition"].startswith(("attached", "in zip", "excerpt")):
            row["disposition"] = "not attached (%s): %s" % (reason, row["path"])
        rows.append(row)
    note = "Attachments removed: %s." % reason
    thin = result._replace(notes=[note] + list(result.notes or []))
    msg = _assemble(thin, cfg, [], rows)
    msg.replace_header("Message-ID", original["Message-ID"])
    for name in ("In-Reply-To", "References"):
        if original[name]:
            msg[name] = original[name]
    return msg


def _build_minimal(result, cfg, exc):
    """The last fallback message. Each header is set on its own: one that cannot be set (a
    From the header parser rejects) costs that header only, and the body says so."""
    from email.message import EmailMessage
    msg, notes = EmailMessage(), []
    headers = (("From", lambda: _from_addr(cfg, _hostname())),
               ("To", lambda: ", ".join(_recipients(cfg))),
               ("Subject", lambda: "[gpualert] %s: %s (message rendering failed)" % (
                   _clean(getattr(result, "status", "?"), 20), _clean(getattr(result, "name", "?"), 60))),
               ("X-Gpualert-Status", lambda: _clean(getattr(result, "status", ""), 20) or "UNKNOWN"))
    for name, value in headers:
        try:
            msg[name] = value()
        except Exception as err:
            notes.append("note: the %s header could not be set: %s" % (name, _describe(err)))
    if "From" not in msg:
        msg["From"] = "gpualert@%s" % _hostname()[:64]
    body = ["gpualert could not render the full message: %s" % _describe(exc), ""] + notes
    for field in getattr(result, "_fields", ()):
        body.append("%s: %s" % (field, _clean(repr(getattr(result, field)), 2000)))
    try:
        msg.set_content("\n".join(body) + "\n", cte="quoted-printable")
    except Exception as err:  # the body itself will not go: the headers still do, and stderr says why
        _warn("warning: the fallback message has no body: %s" % _describe(err))
    return msg


# ==== Edges: the durable log ====

class RunLog(object):
    """The run's log file: a header before the child exists, raw output, then a footer.

    Writes go through one O_APPEND descriptor, under a lock (the drain thread writes too).
    A failed write (disk full, quota) never stops the run: the next write tries again, and
    once one succeeds the gap is marked in the log, so the log goes on when space returns.
    """

    def __init__(self, path, dir_fd=None):
        import threading
        self.path = path
        # dir_fd: the run directory as opened at its creation (open_own_dir): the log is made
        # in it even if its path was swapped for a link meanwhile
        name = os.path.basename(path) if dir_fd is not None else path
        self.fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_APPEND | getattr(os, "O_NOFOLLOW", 0),
                          0o600, dir_fd=dir_fd)
        self.lines = 0
        self.sync_error = None
        self.lost_bytes = 0  # all bytes never written
        self.gap_bytes = 0  # lost since the last successful write: the next marker says so
        self.reason = None
        self.at_line_start = True
        self._lock = threading.Lock()

    @property
    def error(self):
        if not self.lost_bytes:
            return None
        return ("log write failed (%s): %d bytes of output are not in the log; each gap is marked "
                "there" % (self.reason, self.lost_bytes))

    def write(self, data, own_line=False):
        with self._lock:
            if self.gap_bytes and not self._write_all(self._gap_marker(), lost=False):
                self._lose(len(data))
                return
            self.gap_bytes = 0
            if own_line and not self.at_line_start:
                data = b"\n" + data
            self._write_all(data)

    def _gap_marker(self):
        return ("%s[gpualert: %d bytes not logged: %s]\n" % (
            "" if self.at_line_start else "\n", self.gap_bytes, self.reason)).encode()

    def _write_all(self, data, lost=True):
        """True if every byte went to disk; on a failure the rest is counted as lost output."""
        view = memoryview(data)
        try:
            while view:
                n = os.write(self.fd, view)
                self.at_line_start = view[n - 1:n] == b"\n"
                view = view[n:]
            return True
        except OSError as exc:
            self.reason = exc.strerror
            if lost:
                self._lose(len(view))
            return False

    def _lose(self, count):
        self.lost_bytes += count
        self.gap_bytes += count

    def record(self, title, fields, sync=True):
        """A delimited block of `key: value` lines on lines of their own, so readers can tell
        it from output, whatever the output's last byte was."""
        lines = ["%s %s ===" % (HEADER_MARK, title)]
        lines += ["%s: %s" % (k, _clean(v)) for k, v in fields if v not in (None, "", [])]
        self.write(("\n".join(lines) + "\n").encode("utf-8", "replace"), own_line=True)
        self.lines += len(lines)
        if sync:
            self.sync()

    def sync(self):
        try:
            os.fsync(self.fd)
        except OSError as exc:  # the bytes may not survive a crash of the node: say so
            self.sync_error = "log not synced to disk (%s)" % exc.strerror

    def close(self):
        try:
            os.close(self.fd)
        except OSError:
            pass  # after the last sync: nothing more could be lost here


def find_evidence(path, after_line=0, seconds=EVIDENCE_SCAN_S):
    """[(line number, line)]: the first EVIDENCE_MAX_LINES lines of the log after line
    `after_line` (the header) that hold an EVIDENCE_MARKERS string, wherever they are, so the
    classifier is not limited to the tail. Bounded memory; see EvidenceFollower (a finished
    log: two greps, one per half) and EvidenceScan (one grep, or Python without grep)."""
    try:
        scan = EvidenceFollower(path, after_line, finished=True)
    except OSError:
        scan = EvidenceScan(path, after_line)
    return scan.result(seconds)


def _count_newlines_fast(f, stop, rest):
    """count_newlines(f, stop), where `rest` is all of f after those bytes. A long file is
    counted by wc -l, which reads it at about 0.2 s a GiB where bytes.count takes 0.6 s, less
    the newlines of `rest`; when wc is missing, or the file changed meanwhile, count_newlines."""
    if stop >= WC_MIN_BYTES:
        import subprocess
        whole = stop + len(rest)
        try:
            if os.fstat(f.fileno()).st_size == whole:
                with open(f.name, "rb") as again:  # wc reads it all, from the start
                    out = subprocess.run(["wc", "-l"], stdin=again, stdout=subprocess.PIPE,
                                         stderr=subprocess.DEVNULL, env=dict(os.environ, LC_ALL="C"))
                if out.returncode == 0 and os.fstat(f.fileno()).st_size == whole:
                    return int(out.stdout.split()[0]) - rest.count(b"\n")
        except (OSError, ValueError, IndexError):
            pass
    return count_newlines(f, stop)


def read_tail(path, max_bytes=MAX_LOG_BYTES, total_lines=None):
    """(text, first_line) for the last max_bytes of path, starting at a line boundary."""
    with open(path, "rb") as f:
        f.seek(0, 2)
        size = f.tell()
        start = max(0, size - max_bytes)
        f.seek(start)
        rest = f.read(max_bytes)
        cut = rest.find(b"\n") + 1 if start > 0 else 0  # 0 for one giant line: keep its end
        if isinstance(total_lines, int) and total_lines > 0:
            lines_here = rest.count(b"\n", cut) + (0 if rest.endswith(b"\n") or len(rest) == cut else 1)
            first = max(1, total_lines - lines_here + 1)
        elif start > 0:
            first = _count_newlines_fast(f, start, rest) + (1 if cut else 0) + 1
        else:
            first = 1
    # Decoded from a view: a copy of the megabytes after the cut would only raise the peak.
    return str(memoryview(rest)[cut:], "utf-8", "replace"), first


def _header_line_count(path):
    """How many lines gpualert's own run header takes at the top of a log (0 for another
    log): what the user typed on its `command:` line is never evidence."""
    with open(path, "rb") as f:
        head = _decode(f.read(64 * 1024)).split("\n")[:-1]
    if not head or not head[0].startswith(HEADER_MARK + " run started"):
        return 0
    count = 1
    while count < len(head) and head[count].split(":", 1)[0] in _RUN_HEADER_KEYS:
        count += 1
    return count


def classify_log(path, facts=None, max_bytes=MAX_LOG_BYTES):
    """Classify the log file at path: its tail, and the decisive-looking lines anywhere before
    it (find_evidence), as a run's own message does. Raises OSError only if it cannot be read."""
    facts = facts if isinstance(facts, dict) else {}
    text, first = read_tail(path, max_bytes or MAX_LOG_BYTES, facts.get("total_lines"))
    if first > 1 and "noted_lines" not in facts:  # the tail is not the whole log
        facts["noted_lines"] = find_evidence(path, _header_line_count(path))
    return classify_text(_blank_run_headers(text), facts, first_line=first)


class EvidenceScan(object):
    """find_evidence started now, collected later (it runs beside the other post-exit work).
    grep reads a GiB in about half a second of CPU and sends each line as it finds it, so a
    scan cut short by the deadline still gives the first lines; without grep, a slower scan
    in Python runs in result(), bounded by the same deadline."""

    def __init__(self, path, after_line=0, pattern=None):
        import subprocess
        self.path, self.after_line, self.proc, self.pattern = path, after_line, None, pattern
        try:
            src = os.open(path, os.O_RDONLY)
        except OSError:  # the scan in Python says why
            return
        try:
            self.proc = _start_grep(subprocess.PIPE, pattern)
        except OSError:  # no grep here
            os.close(src)
            return
        threading.Thread(target=_feed_clipped, args=(src, self.proc, 0, os.fstat(src).st_size),
                         daemon=True).start()

    def result(self, seconds):
        deadline = time.monotonic() + seconds
        found = self._collect(seconds) if self.proc else None
        if found is None:  # no grep, or one that failed: the scan in Python
            found = _scan_evidence(self.path, max(0.5, deadline - time.monotonic()), self.pattern)
        return [(n, text) for n, text in found if n > self.after_line]

    def _collect(self, seconds):
        deadline = time.monotonic() + seconds
        try:
            data = _read_pipe(self.proc.stdout.fileno(), EVIDENCE_READ_BYTES, seconds)
            if len(data) < EVIDENCE_READ_BYTES and time.monotonic() < deadline:
                # its output ended, so it is exiting: wait for the status that tells a failed
                # grep from "nothing found" (killed now, it would read as the latter)
                _safely(lambda: self.proc.wait(max(0.1, deadline - time.monotonic())), None)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
            self.proc.stdout.close()
            self.proc.wait()
        return None if _grep_failed(self.proc, data) else _grep_lines(data)


def _evidence_grep(source, pattern=None):
    """The grep command that prints the log's evidence lines (or those matching the ERE
    pattern), numbered; source: a path or "-"."""
    return ["grep", "-n", "-a", "-E", "--line-buffered", "-m", str(EVIDENCE_MAX_LINES),
            pattern or "|".join(EVIDENCE_MARKERS), "--", source]


def _grep_lines(data):
    """[(line number, line)] from grep -n output."""
    found = []
    for raw in data.split(b"\n")[:-1]:  # the last piece: empty, or cut off by a bound
        number, _, text = raw.partition(b":")
        if number.isdigit():
            found.append((int(number), _decode(text[:MAX_LINE_CHARS])))
    return found


class EvidenceFollower(object):
    """find_evidence while the log is written: one grep reads the log as it grows, so at the
    exit only the bytes written since its last look remain to be scanned, not the whole log
    (about a second per GiB). Same command, same bytes in the same order, so the same lines
    with the same numbers as EvidenceScan after the exit.

    A thread feeds grep's stdin from the log file through a LineClip, with sendfile (the
    kernel copies; the GIL is free meanwhile), and another collects grep's output. grep runs
    niced: it takes CPU the job and the pump leave idle and never competes with them.
    result() is EvidenceScan's.

    A long rest at the end (a finished log: all of it) is shared by two greps, one per half,
    so a second core halves the wait. A thread of its own feeds the second its half; the
    first is fed up to the same line boundary, then EVIDENCE_SPLIT_LINE, a line made to
    match: the number grep gives that line tells how many lines the first half has, so the
    second's line numbers are shifted by exactly that. Its lines count only when the first
    finished.
    """

    def __init__(self, path, after_line=0, finished=False):
        import binascii
        import subprocess
        self.path, self.after_line = path, after_line
        self._src = os.open(path, os.O_RDONLY)
        try:
            self.proc = _start_grep(subprocess.PIPE)
            self._clip = LineClip(self._src, self.proc.stdin.fileno())
        except OSError:
            os.close(self._src)
            raise
        # Our niceness is the caller's (`nice -n 19 gpualert ...`), and grep's at its start.
        self._nice = _safely(lambda: os.getpriority(os.PRIO_PROCESS, 0), None)
        if not finished and self._nice is not None:  # after the job's end nothing is there to give way to
            _safely(lambda: os.setpriority(os.PRIO_PROCESS, self.proc.pid, min(19, self._nice + FOLLOW_NICE)),
                    None)
        self._sink = self.proc.stdin.fileno()
        _safely(lambda: _set_pipe_size(self._sink, READ_CHUNK_BYTES), None)
        self.fed = 0  # bytes of the log grep has been given
        self.truncated = False  # the log shrank under us (`: > output.log`): scan it whole
        self._seen = b""  # the last bytes grep was given, to see a truncated and refilled log
        self.second = None  # the grep of the second half, when the rest was split
        self._mark = EVIDENCE_SPLIT_LINE % binascii.hexlify(os.urandom(8)).decode()
        self._out, self._second_out = bytearray(), bytearray()
        self._lock = threading.Lock()  # result() giving up vs the feeder starting a second grep
        self._given_up = False
        self._final = threading.Event()  # result() was called: feed to the end, then stop
        if finished:
            self._final.set()
        self._feeder = threading.Thread(target=self._feed, daemon=True)
        self._reader = threading.Thread(target=_collect_grep, args=(self.proc, self._out), daemon=True)
        self._second_reader = None
        self._feeder.start()
        self._reader.start()

    def result(self, seconds):
        """[(line number, line)] after the header, as EvidenceScan.result; within seconds."""
        deadline = time.monotonic() + seconds
        self._final.set()
        self._reader.join(seconds)
        with self._lock:
            second, reader = self.second, self._second_reader
            self._given_up = self._reader.is_alive()
        if reader is not None:
            reader.join(max(0.0, deadline - time.monotonic()))
        for proc, thread in ((self.proc, self._reader), (second, reader)):
            if proc is not None and thread is not None and not thread.is_alive():
                # its output has ended, so it is exiting: its status (a failed grep) decides below
                _safely(lambda: proc.wait(max(0.1, deadline - time.monotonic())), None)
        if self.truncated or _killed_elsewhere(self.proc) or _killed_elsewhere(second) or \
                _grep_failed(self.proc, self._out) or _grep_failed(second, self._second_out):
            return EvidenceScan(self.path, self.after_line).result(
                max(0.5, deadline - time.monotonic()))  # a scan of the whole log after all
        for proc in (self.proc, second):  # past the deadline: keep the lines found so far
            if proc is not None and proc.poll() is None:
                _stop_grep(proc)
        for thread in (self._reader, reader):
            if thread is not None:
                thread.join(1.0)
        for proc in (self.proc, second):
            if proc is not None:
                _safely(proc.wait, None)
        found = self._joined(second is not None and reader is not None and not reader.is_alive())
        return [(n, text) for n, text in found if n > self.after_line]

    def _joined(self, second_done):
        found = _grep_lines(bytes(self._out))
        split_seen = bool(found) and found[-1][1] == self._mark
        if self.second is None or not split_seen:
            return found  # the first grep stopped before the split (its -m limit, the deadline)
        before = found.pop()[0] - 1  # the lines of the first half
        if second_done:
            room = max(0, EVIDENCE_READ_BYTES - len(self._out))
            found += [(n + before, text) for n, text in _grep_lines(bytes(self._second_out[:room]))]
        return found[:EVIDENCE_MAX_LINES]

    def _feed(self):
        try:
            while True:
                final = self._final.is_set()  # read before the size: the last look sees all
                size = os.fstat(self._src).st_size
                if final:
                    # The job has ended: back to the caller's niceness (never above it) where
                    # that is allowed (root, or RLIMIT_NICE), so a busy node does not starve the rest.
                    if self._nice is not None:
                        _safely(lambda: os.setpriority(os.PRIO_PROCESS, self.proc.pid, self._nice), None)
                    size = self._split(size)
                if self._rewritten(size):  # what grep saw is gone: scan it whole at the end
                    self.truncated = True
                    return
                # read before the send: a log rewritten while it is sent then differs next time
                seen = os.pread(self._src, min(size, 64), max(0, size - 64))
                while self.fed < size:
                    sent = self._send(size - self.fed)
                    if not sent:  # shorter than its size a moment ago: truncated under us
                        self.truncated = True
                        return
                    self.fed += sent
                self._seen = seen
                if final:
                    if self.second is not None:
                        os.write(self._sink, self._mark.encode() + b"\n")
                    return
                self._final.wait(FOLLOW_POLL_S)
        except OSError:  # grep is gone: its -m limit was reached, or result() gave up on it
            pass
        finally:
            _safely(self.proc.stdin.close, None)
            _safely(lambda: os.close(self._src), None)

    def _rewritten(self, size):
        """Was the log truncated under us (`: > output.log` to free quota)? It is shorter than
        what grep was given, or the last bytes grep was given are no longer there."""
        if size < self.fed:
            return True
        return self.fed > 0 and os.pread(self._src, len(self._seen), self.fed - len(self._seen)) != self._seen

    def _split(self, size):
        """The end of what the first grep gets: `size`, or a line boundary halfway through a
        long rest, the rest of which a second grep (at full priority) reads from the file."""
        if size - self.fed < EVIDENCE_SPLIT_BYTES or (os.cpu_count() or 1) < 2:
            return size
        middle = self.fed + (size - self.fed) // 2
        cut = os.pread(self._src, 64 << 10, middle).find(b"\n")
        if cut < 0:  # one giant line there: no line boundary to share at
            return size
        middle += cut + 1
        import subprocess
        try:
            with self._lock:
                if self._given_up:
                    return size
                self.second = _start_grep(subprocess.PIPE)
                threading.Thread(target=_feed_clipped, args=(os.dup(self._src), self.second, middle, size),
                                 daemon=True).start()
                self._second_reader = threading.Thread(
                    target=_collect_grep, args=(self.second, self._second_out), daemon=True)
                self._second_reader.start()
        except OSError:
            return size
        return middle

    def _send(self, count):
        return self._clip.send(self.fed, min(count, FOLLOW_CHUNK_BYTES))


class LineClip(object):
    """What an evidence grep is given of a log: all of it, but a line's first
    EVIDENCE_LINE_BYTES only (grep holds a whole line in memory: a log of one 300 MB line
    made it a 435 MiB process). Every line break is given, so grep's line numbers are the
    log's; it shows a line's first MAX_LINE_CHARS anyway. A probe of the last bytes of each
    line-length window finds a line start there, so ordinary lines still go by sendfile."""

    PROBE_BYTES = 64 << 10

    def __init__(self, src, sink, line_at=0):
        self.src, self.sink = src, sink
        self.line_at = line_at  # a line start, at or before the line being given
        self.clip_from = None  # where the over-long line being given is cut

    def send(self, offset, count):
        """Gives grep its part of the log's bytes [offset, offset + count) (`offset` follows
        the bytes given before). -> how many bytes of the log that took (0: the log ended)."""
        end = offset + count
        while self.clip_from is None and self.line_at + EVIDENCE_LINE_BYTES < end:
            self._find_line_start()
        if self.clip_from is None or offset < self.clip_from:
            return _give_grep(self.sink, self.src, offset, min(end, self.clip_from or end) - offset)
        data = os.pread(self.src, count, offset)  # the cut reaches to the line break
        nl = data.find(b"\n")
        if nl < 0:
            return len(data)
        self.clip_from, self.line_at = None, offset + nl + 1
        return nl or self.send(offset, count)

    def _find_line_start(self):
        """The last line start in the window of a line's length after line_at: line_at moves
        there; with none, the line from line_at is over-long and is cut at the window's end."""
        limit = self.line_at + EVIDENCE_LINE_BYTES
        probe = max(self.line_at, limit - self.PROBE_BYTES)
        nl = os.pread(self.src, limit - probe, probe).rfind(b"\n")
        if nl < 0 and probe > self.line_at:  # a long line: the whole window
            probe = self.line_at
            nl = os.pread(self.src, limit - probe, probe).rfind(b"\n")
        if nl < 0:
            self.clip_from = limit
        else:
            self.line_at = probe + nl + 1


def _give_grep(sink, src, offset, count):
    try:
        return os.sendfile(sink, src, offset, count)
    except OSError as exc:
        if exc.errno not in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP):
            raise
    # No sendfile to a pipe here: through our memory, a read's worth at a time.
    return os.write(sink, os.pread(src, min(count, READ_CHUNK_BYTES), offset))


def _feed_clipped(src, proc, start, end):
    """grep's stdin gets the log's bytes [start, end) (start: a line start) through a
    LineClip, then its end; src is closed."""
    clip = LineClip(src, proc.stdin.fileno(), start)
    _safely(lambda: _set_pipe_size(clip.sink, READ_CHUNK_BYTES), None)
    try:
        while start < end:
            sent = clip.send(start, min(end - start, FOLLOW_CHUNK_BYTES))
            if not sent:
                break
            start += sent
    except OSError:  # grep is gone: its -m limit was reached, or the scan gave up on it
        pass
    finally:
        _safely(proc.stdin.close, None)
        _safely(lambda: os.close(src), None)


def _start_grep(stdin, pattern=None):
    """The evidence grep on stdin (a pipe to feed, or an open file), its output on a pipe.
    In a session of its own: a signal sent to our process group (timeout(1), Ctrl-C, `kill
    0`) is for the job, and must not end the scan of its log; it ends when its input does
    (our end of the pipe closes however we exit)."""
    import subprocess
    return start_helper(_evidence_grep("-", pattern), stdin=stdin, stdout=subprocess.PIPE,
                        stderr=subprocess.DEVNULL, env=dict(os.environ, LC_ALL="C"))


def _collect_grep(proc, out):
    """proc's output into the bytearray out, up to EVIDENCE_READ_BYTES (then proc is killed)."""
    fd = proc.stdout.fileno()
    try:
        while len(out) < EVIDENCE_READ_BYTES:
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                break
            out += chunk
    except OSError:
        pass
    finally:
        _safely(proc.stdout.close, None)
        if len(out) >= EVIDENCE_READ_BYTES:  # enough: grep need not go on
            _stop_grep(proc)


def _stop_grep(proc):
    proc.stopped_by_us = True
    _safely(proc.kill, None)


def _grep_failed(proc, out):
    """Did grep stop with an error before printing anything (a grep without an option we
    use, e.g. busybox's)? Exit 1 is only "nothing found"."""
    return proc is not None and proc.poll() is not None and proc.returncode >= 2 and not out


def _killed_elsewhere(proc):
    """Did a signal we did not send end this grep (its lines then stop short)?"""
    return proc is not None and proc.poll() is not None and proc.returncode < 0 and \
        not getattr(proc, "stopped_by_us", False)


def _read_pipe(fd, max_bytes, seconds):
    import select
    data, deadline = bytearray(), time.monotonic() + seconds
    while len(data) < max_bytes:
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            break
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            break
        data += chunk
    return bytes(data)


def _scan_evidence(path, seconds, pattern=None):
    """The same as the grep, in Python: slower, so it stops at `seconds`."""
    marker_re = re.compile((pattern or "|".join(EVIDENCE_MARKERS)).encode(), re.M)
    found, line_no, carry = [], 1, b""
    deadline = time.monotonic() + seconds
    with open(path, "rb") as f:
        while len(found) < EVIDENCE_MAX_LINES and time.monotonic() < deadline:
            chunk = f.read(8 << 20)
            if not chunk:
                break
            buf = carry + chunk
            cut = buf.rfind(b"\n") + 1
            body, carry = buf[:cut], buf[cut:cut + EVIDENCE_LINE_BYTES]  # bounded, as grep's lines
            line_no = _scan_body(body, line_no, marker_re, found)
    return found[:EVIDENCE_MAX_LINES]


def _scan_body(body, line_no, marker_re, found):
    pos = 0
    for m in marker_re.finditer(body):
        if m.start() < pos:
            continue  # a second marker on a line already taken
        start = body.rfind(b"\n", 0, m.start()) + 1
        end = body.find(b"\n", m.start())
        line_no += body.count(b"\n", pos, start)
        found.append((line_no, _decode(body[start:end][:MAX_LINE_CHARS])))
        pos = end
    return line_no + body.count(b"\n", pos)


def make_run_dir(log_dir, name, host, scheduler, *, rank=None, start):
    """A fresh directory per run; array tasks and ranks never collide."""
    stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(start))
    parts = [stamp, re.sub(r"[^\w.-]+", "_", name)[:40]]
    if scheduler.get("dir_tag"):
        parts.append(scheduler["dir_tag"])
    parts.append(host)
    if rank is not None:
        parts.append("rank%d" % rank)
    base = os.path.join(log_dir, "-".join(parts))
    planted = foreign_link(log_dir)
    if planted:
        raise OSError(errno.EPERM, planted)
    for n in range(1000):
        path = base if n == 0 else "%s.%d" % (base, n)
        try:
            make_private_dirs(path)  # a log can hold anything the job printed
            return path
        except OSError as exc:
            if exc.errno != errno.EEXIST:
                raise
    raise GpuAlertError("cannot create a run directory under %s" % log_dir)


def open_own_dir(path):
    """A directory of ours as a descriptor (O_DIRECTORY, O_NOFOLLOW, owner checked): whatever
    is renamed or linked at its path later, what is done through it stays in this directory
    (the run directory just made; the outbox _tighten_dir makes private)."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0))
    if os.fstat(fd).st_uid != os.geteuid():
        os.close(fd)
        raise OSError(errno.EPERM, "%s is not yours: refused" % path)
    return fd


def run_dir_moved(path, fd):
    """None while `path` is still the directory `fd` was opened on; else where that directory
    is now (Linux's /proc/self/fd; "?" elsewhere): someone renamed it and maybe put a link
    or another directory in its place (a group-writable --log-dir without the sticky bit)."""
    try:
        now, ours = os.lstat(path), os.fstat(fd)
        if (now.st_dev, now.st_ino) == (ours.st_dev, ours.st_ino):
            return None
    except OSError:
        pass
    try:
        return os.readlink("/proc/self/fd/%d" % fd)
    except OSError:
        return "?"


def header_fields(argv, *, host, cwd, start, scheduler=None, rank=None, attempt=None):
    """The log's header: what a run knows before its child exists (argv as shown, redacted;
    attempt: (number, its RESUME_ENV value) under --requeue)."""
    fields = [("command", quote_argv(argv)), ("host", host), ("cwd", cwd),
              ("start", iso_time(start)), ("pid", os.getpid()), ("gpualert", __version__)]
    if scheduler:
        fields.append(("scheduler", " ".join("%s=%s" % (k, v) for k, v in sorted(
            scheduler.items()) if k not in ("dir_tag", "label"))))
    if rank is not None:
        fields.append(("rank", rank))
    if attempt:
        fields.append(("attempt", "%d (%s=%s)" % (attempt[0], RESUME_ENV, attempt[1])))
    return fields


def footer_fields(child, start, end, log):
    fields = [("end", iso_time(end)), ("duration", format_duration(end - start))]
    if child.exec_error:
        fields.append(("exec failed", "%s (exit status %d)" % (
            child.exec_error[1], exit_status_for(None, child.exec_error))))
    elif child.exit_code is not None and child.exit_code < 0:
        fields.append(("signal", "%s (exit status %d)" % (
            signal_name(-child.exit_code), exit_status_for(child.exit_code))))
    else:
        fields.append(("exit", child.exit_code))
    if child.timed_out:
        fields.append(("timeout", "gpualert's --timeout ended the run"))
    if child.signals:
        fields.append(("signals received", ", ".join(
            "%s (from %s)" % (name, sender) for name, _, sender in child.signals)))
    if log.lost_bytes:
        fields.append(("lost", "%d bytes of output could not be written" % log.lost_bytes))
    return fields


#: Metrics come from a bounded sample of the log, whatever its size: the head (first
#: values), evenly spaced blocks (the curve's shape) and the tail (last values).
METRIC_SAMPLE_HEAD_BYTES = 128 * 1024
METRIC_SAMPLE_TAIL_BYTES = 256 * 1024
METRIC_SAMPLE_BLOCKS = 64
METRIC_SAMPLE_BLOCK_BYTES = 4 * 1024


def read_log_sample(path, head=METRIC_SAMPLE_HEAD_BYTES, tail=METRIC_SAMPLE_TAIL_BYTES,
                    blocks=METRIC_SAMPLE_BLOCKS, block=METRIC_SAMPLE_BLOCK_BYTES):
    """-> (text chunks cut at line breaks, in file order; bytes in the file). A log that
    fits in the sample is read whole (one chunk)."""
    with open(path, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        if size <= head + tail + blocks * block:
            return [f.read(size).decode("utf-8", "replace")], size
        parts = [_cut_lines(f.read(head), first=False)]
        middle = size - head - tail
        for n in range(blocks):
            f.seek(head + int(middle * (n + 0.5) / blocks) - block // 2)
            parts.append(_cut_lines(f.read(block)))
        f.seek(size - tail)
        parts.append(_cut_lines(f.read(tail), last=False))
    return [p.decode("utf-8", "replace") for p in parts if p], size


def _cut_lines(data, first=True, last=True):
    """Drop the partial line at the start (first) and at the end (last) of a block; a CR ends
    a line too (a progress bar's update)."""
    if first:
        cut = re.search(b"[\r\n]", data)  # the first break of either kind
        data = data[cut.end():] if cut else b""
    if last:
        cut = max(data.rfind(b"\n"), data.rfind(b"\r"))
        data = data[:cut] if cut >= 0 else b""
    return data


#: Lines that may name a checkpoint written (saved_checkpoint_paths then decides), for the grep
#: over a log too big to read whole: a save line between the sampled blocks still counts.
CHECKPOINT_GREP = (r"[Cc]heckpoint|[Cc]kpt|\.pth?([^A-Za-z]|$)|\.safetensors|\.h5|\.keras|"
                   r"\.msgpack|\.distcp|\.bin|global_step")


def extract_log_metrics(path, wanted=None):
    """The metrics dict for a finished run's log (run.json's "metrics"); {} when none."""
    chunks, size = read_log_sample(path)
    metrics = metrics_from_chunks(chunks, wanted)
    if len(chunks) > 1:
        metrics = _with_all_saves(metrics, path)
    if not metrics["records"] and not metrics.get("notes"):  # the checkpoints still count
        return dict((k, metrics[k]) for k in ("saved", "loaded") if metrics.get(k))
    metrics["log_bytes"] = size
    metrics["sampled_bytes"] = sum(len(c) for c in chunks)
    metrics["sampled"] = len(chunks) > 1
    return metrics


def _with_all_saves(metrics, path):
    """metrics whose "saved" lists every save line of a sampled log (the evidence search's
    grep over the whole file), in the log's order, the newest CHECKPOINT_SAVES_MAX. A save
    the sample saw keeps its after_nonfinite; one it missed is judged by its name's step."""
    lines = _safely(lambda: EvidenceScan(path, 0, CHECKPOINT_GREP).result(EVIDENCE_SCAN_S), []) or []
    seen = dict((s["path"], s) for s in metrics.get("saved") or ())
    saved = []
    for _, line in lines:
        for p in saved_checkpoint_paths(line):
            saved = [s for s in saved if s["path"] != p] + [seen.get(p) or {"path": p, "after_nonfinite": False}]
    saved += [s for s in seen.values() if s not in saved]  # a grep cut short keeps the sample's
    if saved:
        metrics = dict(metrics, saved=saved[-CHECKPOINT_SAVES_MAX:])
    return metrics


# ==== Edges: the child and its output ====

def child_env(environ, tweaks=True):
    """The child's environment: the wrapper's, plus unbuffered Python and its faulthandler."""
    env = dict((k, v) for k, v in environ.items() if not _secret_env(k))
    if tweaks:
        env.setdefault("PYTHONUNBUFFERED", "1")
        env.setdefault("PYTHONFAULTHANDLER", "1")
    return env


def _secret_env(name):
    """A GPUALERT_* variable the job must never see (the SMTP password, tokens, URLs)."""
    if not name.startswith(ENV_PREFIX):
        return False
    return bool(SECRET_NAME.search(name[len(ENV_PREFIX):])) or name in (
        ENV_PREFIX + k.upper() for k in SECRET_KEYS) or "CHANNEL" in name or "URL" in name


def _signal_set():
    return set(getattr(signal, n) for n in FORWARDED_SIGNALS) | {signal.SIGCHLD}


def same_output(fd_a, fd_b):
    """Are two of our outputs one file (one terminal, one pipe, `> log 2>&1`)? Then the child
    gets one pipe for both, and the log has the order 2>&1 gives."""
    try:
        a, b = os.fstat(fd_a), os.fstat(fd_b)
    except OSError:
        return False
    return (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)


def controlling_terminal():
    """An fd of our controlling terminal, or None (a batch job, a daemon, no terminal)."""
    try:
        return os.open("/dev/tty", os.O_RDWR | os.O_NOCTTY)
    except OSError:
        return None


def child_group_plan(tty):
    """(own group?, give it the terminal?) for the child.

    Its own group, so a signal sent to ours (timeout(1), kill -SIG -PGID, `kill 0`) reaches it
    only through us. When a job-control shell made us a foreground job of our own, the
    child's group becomes the foreground job, so Ctrl-C, Ctrl-Z and reads from the terminal
    are its own. In the foreground job of a script, or as the session's leader (`ssh -t host
    gpualert ...`, a pty), the child stays in our group: the terminal's Ctrl-C reaches the
    script too, and us (so we know it was the terminal's), and everyone once.
    """
    if tty is None or _foreground(tty) != os.getpgrp():
        return True, False
    job_of_our_own = os.getpgrp() == os.getpid() and os.getsid(0) != os.getpid()
    return (True, True) if job_of_our_own else (False, False)


def _set_foreground(tty, pgid):
    """tcsetpgrp from the background too: SIGTTOU is ignored for the call, as shells do."""
    old = signal.signal(signal.SIGTTOU, signal.SIG_IGN)
    try:
        os.tcsetpgrp(tty, pgid)
    except OSError:
        pass
    finally:
        signal.signal(signal.SIGTTOU, old)


def _foreground(tty):
    try:
        return os.tcgetpgrp(tty)
    except OSError:
        return None


def spawn_child(argv, env, out_fd, err_fd, *, tty=None, own_group=True):
    """fork+exec in a process group of its own; -> (pid, None) or (None, (errno, message)).

    Not subprocess: the wrapper blocks its signals to read who sent them (sigtimedwait), and
    the child must start with the mask and dispositions a shell would give it. Its own group
    means a signal sent to our group (timeout(1), kill -SIG -PGID, `kill 0`) reaches the child
    only through us, once; with `tty` it becomes the terminal's foreground job, so Ctrl-C and
    Ctrl-Z reach it, and only it, as they would without gpualert.
    """
    err_r, err_w = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child side ends in exec or _exit
        try:
            os.close(err_r)
            signal.pthread_sigmask(signal.SIG_SETMASK, [])
            for name in ("SIGPIPE", "SIGXFSZ"):
                signal.signal(getattr(signal, name), signal.SIG_DFL)
            if own_group:
                _own_group(os.getpid(), tty)
            os.dup2(out_fd, 1)
            os.dup2(err_fd, 2)
            os.execvpe(argv[0], argv, env)
        except OSError as exc:
            os.write(err_w, ("%d:%s" % (exc.errno or 0, exc.strerror or exc)).encode())
        except BaseException as exc:
            os.write(err_w, ("0:%s" % exc).encode())
        os._exit(EXIT_NOT_EXECUTABLE)
    os.close(err_w)
    if own_group:
        _own_group(pid, tty)
    return _exec_report(pid, err_r, argv)


def _own_group(pid, tty):
    """pid into a group of its own (the terminal's foreground one with tty): on both sides of
    the fork, as a shell does, so whoever runs first wins the race."""
    try:
        os.setpgid(pid, pid)
    except OSError:  # the other side did it already (or the child exec'd): fine either way
        pass
    if tty is not None:
        _set_foreground(tty, pid)


def _exec_report(pid, err_r, argv):
    report = b"".join(iter(lambda: os.read(err_r, 4096), b""))
    os.close(err_r)
    if not report:
        return pid, None
    os.waitpid(pid, 0)
    code, _, message = report.decode("utf-8", "replace").partition(":")
    return None, (int(code or 0), "%s: %s" % (message, argv[0]))


class TerminalCopy(object):
    """Copies the child's output to one of our outputs from a thread of its own, so a reader
    that stops reading (`| less`, `| sleep`, Ctrl-S) never blocks the control loop: signals,
    --timeout, the log and the message go on. The backlog is bounded; when it is full the pump
    stops reading that pipe, so a slow reader slows the child as tee would."""

    def __init__(self, fd):
        import threading
        self.fd = fd
        self.backlog = 0
        self.dead = False  # the reader went away, or the copy was given up
        self.writing_since = None  # when the write under way began: a reader that stopped
        self._queue = collections.deque()
        self._changed = threading.Condition()
        threading.Thread(target=self._run, daemon=True).start()

    def put(self, data, limit=None):
        """Queue data; past `limit` bytes of backlog the copy is given up instead (after the
        child's exit nothing waits for a reader, and memory stays bounded)."""
        with self._changed:
            if self.dead:
                return
            if limit is not None and self.backlog + len(data) > limit:
                self._stop()
                return
            self._queue.append(data)
            self.backlog += len(data)
            self._changed.notify_all()

    def full(self):
        return self.backlog >= TERMINAL_BACKLOG_BYTES

    def wait_idle(self, seconds, most_s=None, since=None):
        """True once everything queued is written (or the copy is dead), within seconds; with
        most_s, past `seconds` only a copy held that long in one write (a reader that stopped
        reading) is not waited for further: one only slow to run (a loaded node) gets most_s.
        since: when the wait began (time.time()), so that all the copies share one bound."""
        start = time.time() if since is None else since
        end = start + max(seconds, most_s or 0.0)
        with self._changed:
            while self.backlog and not self.dead:
                now, writing = time.time(), self.writing_since
                held = not most_s or (writing is not None and now - writing >= seconds)
                if now >= end or (now - start >= seconds and held):
                    break
                self._changed.wait(min(POLL_S, end - now))
            return not self.backlog or self.dead

    def give_up(self):
        with self._changed:
            self._stop()

    def _stop(self):
        self.dead = True
        self._queue.clear()
        self.backlog = 0
        self._changed.notify_all()

    def _run(self):
        while True:
            with self._changed:
                while not self._queue:
                    self._changed.wait()
                data = self._queue.popleft()
            self._write(data)
            with self._changed:
                self.backlog = max(0, self.backlog - len(data))
                self._changed.notify_all()

    def _write(self, data):
        try:
            view = memoryview(data)
            while view:  # a pipe's worth a write: one held long is a reader that stopped,
                self.writing_since = time.time()  # not one slower than a whole chunk
                view = view[os.write(self.fd, view[:TERMINAL_WRITE_BYTES]):]
                self.writing_since = None
        except OSError:  # a closed terminal or pipe: keep logging, stop copying
            self.give_up()


def terminal_copies(merged):
    """One copy per output: fd 1 for both when stdout and stderr are one file."""
    TERMINAL_COPIES.clear()
    TERMINAL_COPIES[1] = TerminalCopy(1)
    TERMINAL_COPIES[2] = TERMINAL_COPIES[1] if merged else TerminalCopy(2)
    return TERMINAL_COPIES


def flush_terminal(seconds):
    """Wait for what is queued for our outputs, e.g. the summary line, to be written: up to
    `seconds` for a reader that takes nothing, TERMINAL_GRACE_S for a copy slow to run."""
    since = time.time()
    for copy in set(TERMINAL_COPIES.values()):
        copy.wait_idle(seconds, TERMINAL_GRACE_S, since)


class ChildOutput(object):
    """What the pump keeps of the child's output: bytes read, when the last came, and, until
    frozen (the drain after the exit), the lines counted and the last reads: at least
    TAIL_BYTES of output (when there was that much), at most about twice that."""

    def __init__(self):
        self.pieces, self.size, self.lines, self.bytes = collections.deque(), 0, 0, 0
        self.last_at, self.frozen = time.time(), False
        self.longest_gap, self.reads = 0.0, 0  # the longest silence between two reads (not the start's)

    def add(self, data):
        now = time.time()
        if self.bytes:
            self.longest_gap = max(self.longest_gap, now - self.last_at)
        self.last_at, self.reads = now, self.reads + 1
        self.bytes += len(data)
        if self.frozen:  # the tail and line count stay those at the child's exit
            return
        # The reads themselves, not a copy: the log and the terminal copy have the same
        # objects, so the tail costs no memory of its own and nothing is moved as it slides.
        self.pieces.append(data)
        self.size += len(data)
        while self.size - len(self.pieces[0]) >= TAIL_BYTES:
            self.size -= len(self.pieces.popleft())
        if len(self.pieces) > TAIL_MAX_PIECES:  # many small reads: one piece, not many objects
            joined = b"".join(self.pieces)[-TAIL_BYTES:]
            self.pieces, self.size = collections.deque([joined]), len(joined)
        self.lines += data.count(b"\n")

    def last_line(self):
        """The last line read, and its number among the output's lines."""
        text = b"".join(self.pieces)
        complete = text.endswith(b"\n")
        line = text.rstrip(b"\n").rsplit(b"\n", 1)[-1]
        return line.decode("utf-8", "replace"), self.lines + (0 if complete else 1)

    def bounded(self):
        """The last TAIL_BYTES, from a line start when there is one (the classifier's cost
        grows with its text: it gets the bound). A line that starts before them is kept as
        its last bytes after "[...] ", as the message shows it: a line of 400 MB followed by
        a few short ones still shows its end."""
        whole = b"".join(self.pieces)
        if len(whole) <= TAIL_BYTES:
            return whole
        tail = whole[-TAIL_BYTES:]
        if whole[-TAIL_BYTES - 1:-TAIL_BYTES] == b"\n":
            return tail  # the window starts at a line start already
        cut = tail.find(b"\n") + 1
        if 0 < cut < len(tail):
            return TAIL_CLIPPED_MARK + tail[max(0, cut - 1 - TAIL_LINE_MAX_CHARS + len(TAIL_CLIPPED_MARK)):]
        return tail


class ChildPipes(object):
    """The child's output pipes (read fd -> TerminalCopy) in one poll set. A pipe whose
    terminal backlog is full is not read for now, as tee would block."""

    def __init__(self, fds):
        import select
        self.copies, self.paused, self.poller = dict(fds), set(), select.poll()
        for fd in self.copies:
            self.poller.register(fd, select.POLLIN)

    def hold_back(self):
        import select
        for fd, copy in list(self.copies.items()):
            if fd not in self.paused and copy.full():
                self.poller.unregister(fd)
                self.paused.add(fd)
            elif fd in self.paused and not copy.full():
                self.poller.register(fd, select.POLLIN)
                self.paused.discard(fd)

    def resume_all(self):
        import select
        for fd in self.paused:
            self.poller.register(fd, select.POLLIN)
        self.paused.clear()

    def close(self, fd):
        self.poller.unregister(fd)
        del self.copies[fd]
        os.close(fd)


class SignalRelay(object):
    """Signals to us, blocked and collected with sigtimedwait, so the sender is known: one a
    scheduler daemon sent reached the whole job already, so it is not sent to the child a
    second time; any other is forwarded once (the child is in a group of its own, so a
    signal sent to our group did not reach it). A SIGTERM from slurmstepd to the batch shell
    waits for Slurm's word (runs_on, see pass_held). After a stop signal or --timeout: when
    the SIGKILL is due."""

    def __init__(self, pid, grace, kill_wait, stops, on_signal, *, runs_on=None):
        self.pid, self.grace, self.kill_wait, self.on_signal = pid, grace, kill_wait, on_signal
        self.runs_on = runs_on or (lambda final: False)
        self.held = None  # (signum, until): a SIGTERM the child gets if Slurm runs the job on
        self.stops = stops  # the signal names after which the scheduler's SIGKILL follows
        self.signals = []  # (name, epoch, sender), as ChildExit.signals
        self.signal_set, self.sigchld = _signal_set(), True
        self.term_at = self.kill_at = None
        self.warnings = {"passed": [], "withheld": []}  # warning signal names, see _pass_warning
        self.offered_at = 0.0  # when the withheld warnings were last offered again

    def take(self, wait_s):
        while True:
            info = signal.sigtimedwait(self.signal_set, wait_s)
            if info is None:
                return
            wait_s = 0
            if info.si_signo == signal.SIGCHLD:
                self.sigchld = True
            else:
                self._relay(info)

    def take_own_copy(self, name, wait_s):
        """The child is reaped, dead of the stop signal `name` that we have not had: a kill of
        the whole job (a scheduler's, systemd's) reaches its processes one after the other,
        so for wait_s each copy of that signal is the job's end. Any other signal, or one
        after, stays pending: a request to stop delivering (_wait_interruptible)."""
        self.pid = None  # its number may be another process's by now: forward nothing
        own = set([getattr(signal, name)])
        until = time.monotonic() + wait_s
        while time.monotonic() < until:
            info = signal.sigtimedwait(own, max(0.0, until - time.monotonic()))
            if info is not None:
                self._relay(info)

    def _relay(self, info):
        name = signal_name(info.si_signo)
        now, sender = time.time(), _signal_sender(info)
        self.signals.append((name, now, sender))
        already = not self.pid or _child_already_signalled(info, sender, self.pid)
        if already is None:
            self.held = self.held or (info.si_signo, now + CMD_TIMEOUT_S + 0.5)  # scontrol's answer
        elif not already:
            # SGE means its s_rt USR1 for every process of the job (it signals a user's itself):
            # for a root job's child, gpualert completes that delivery as SGE would
            if name in WARNING_SIGNALS and name not in self.stops and sender != "sge_shepherd":
                self._pass_warning(name, info.si_signo)
            else:
                _send(self.pid, info.si_signo)
        if name in self.stops and self.term_at is None:
            self.term_at = now
            kill_wait = self.kill_wait()
            if sender == "slurmstepd" and already is False:
                kill_wait = None  # scancel --batch -s INT: for the batch shell alone, no SIGKILL follows
            if kill_wait:  # the scheduler's SIGKILL follows: leave time to notify before it
                self.kill_at = now + min(self.grace, kill_wait / 2.0)
        if self.on_signal:
            self.on_signal(name, info)

    def _pass_warning(self, name, signum):
        """A warning (Slurm's --signal=B:USR1@120) goes only to the command's processes that
        catch it (or block it to wait for it): its default action ends a process, and a
        script with no handler would die of the warning, up to N s before the limit."""
        takers = [pid for pid in [self.pid] + _descendants(self.pid) if _takes_signal(pid, signum)]
        for pid in takers:
            _send(pid, signum)
        self.warnings["passed" if takers else "withheld"].append(name)

    def offer_withheld(self, now):
        """A warning withheld goes, once a second, to a process that has since set a handler
        (Slurm may warn within seconds of the start, before the script's imports are done)."""
        withheld = self.warnings["withheld"]
        if not withheld or now - self.offered_at < 1.0 or not self.pid:
            return
        self.offered_at = now
        for name in list(withheld):
            withheld.remove(name)
            self._pass_warning(name, getattr(signal, name))

    def stop_child(self, now):
        _send_tree(self.pid, signal.SIGTERM)
        self.term_at = self.term_at or now
        self.kill_at = now + self.grace

    def pass_held(self, now):
        """A SIGTERM slurmstepd sent us, the batch shell: at the job's end (a time limit, a
        scancel, a preemption) it reached every process of the step, the child too; while
        Slurm runs the job on, it was for the batch shell alone (--signal=B:TERM@N, scancel
        --batch): the child gets it, and no SIGKILL follows. Without an answer in time: the
        job's end, as before Slurm was asked."""
        if not self.held:
            return
        runs_on = self.runs_on(now >= self.held[1])
        if runs_on is None:
            return
        if runs_on and self.pid:
            _send(self.pid, self.held[0])
            self.kill_at = None
        self.held = None

    def check_kill(self, now):
        if self.kill_at and now >= self.kill_at:
            _send_tree(self.pid, signal.SIGKILL)
            self.kill_at = None


class ChildPump(object):
    """Streams the child's output to the log and our outputs, and relays signals (SignalRelay).
    After the child exits, its last output is read, a stalled terminal is given up after
    TERMINAL_GRACE_S, and pipes still held by its leftover processes are drained in a thread
    (drain()), not closed on them."""

    def __init__(self, pid, fds, log, cfg, *, kill_wait=lambda: None, on_stall=None,
                 on_signal=None, tty=None, mirror_stops=False, stops=STOP_SIGNALS, runs_on=None):
        self.pid, self.log, self.cfg, self.on_stall = pid, log, cfg, on_stall
        self.pipes, self.output = ChildPipes(fds), ChildOutput()
        grace = GRACE_S if cfg.get("grace") is None else float(cfg["grace"])
        self.relay = SignalRelay(pid, grace, kill_wait, stops, on_signal, runs_on=runs_on)
        self.signals = self.relay.signals
        self.tty = tty  # our terminal, when the child's group is its foreground job
        self.mirror_stops = mirror_stops  # a stopped child stops us, for the shell to see
        self.exit_code, self.rusage, self.timed_out = None, {}, False
        self.stall_s, self.stall_sent, self.reaped_at = 0.0, False, 0.0
        self.exited_at, self.bytes_at_exit = None, 0
        self.drained = None  # Background of the drain, while leftover processes hold the pipes
        self.hang, self.stop_seen = None, False

    def run(self, timeout=None):
        """Pump until the child has exited and its own output is in the log."""
        deadline = time.time() + timeout if timeout else None
        while self.exit_code is None:
            self._wait_for_events()
            self._check_hang()
            now = time.time()
            if self.relay.sigchld or now - self.reaped_at > 1.0:
                self.relay.sigchld, self.reaped_at = False, now
                self._reap()
            if self.exit_code is not None:
                break
            if deadline and now >= deadline and not self.timed_out:
                self.timed_out = True
                self.relay.stop_child(now)
                self._check_hang()  # before the child's answer to the SIGTERM is read
            self.relay.pass_held(now)
            self.relay.check_kill(now)
            self.relay.offer_withheld(now)
            self._check_stall(now)
        unlike_us = self._killed_unlike_us()
        if unlike_us:
            self.relay.take_own_copy(unlike_us, SAME_KILL_S)
        self.exited_at, self.bytes_at_exit = time.time(), self.output.bytes
        self._take_terminal()
        self.pipes.resume_all()
        self._settle()

    def _check_hang(self):
        """At the first stop (--timeout, a stop signal): was the command hanging? It was when
        its silence since its last output is longer than twice any gap between its outputs
        before (a rhythm needs a few outputs), or than --stall: more time would not help."""
        if self.stop_seen or not self.relay.term_at:
            return
        self.stop_seen, out = True, self.output
        silent, stall = self.relay.term_at - out.last_at, self.cfg.get("stall")
        if out.bytes and silent > 0 and (out.reads >= HANG_MIN_READS and silent > 2 * out.longest_gap
                                         or stall and silent >= stall):
            line, number = out.last_line()
            self.hang = {"silent_s": round(silent, 1), "last_line": line, "line": number}

    def _killed_unlike_us(self):
        """The stop signal that ended the child and has not reached us (yet), or None. Not a
        Ctrl-C on the terminal the child holds: that one is for the child's group alone."""
        died_of = signal_name(-self.exit_code) if self.exit_code < 0 else None
        if died_of in self.relay.stops and self.tty is None and not any(
                name in self.relay.stops for name, _, _ in self.signals):
            return died_of
        return None

    def _wait_for_events(self):
        if self.pipes.copies:
            self.pipes.hold_back()
            self._read_ready(0.02 if self.pipes.paused else POLL_S)
            self.relay.take(0)
        else:  # the child closed its outputs but runs on: still relay and time it
            self.relay.take(POLL_S)

    def _read_ready(self, wait_s):
        """One poll round; returns how many pipes had data or hung up."""
        events = self.pipes.poller.poll(wait_s * 1000)
        for fd, _ in events:
            self._read(fd)
        return len(events)

    def _read(self, fd):
        try:
            data = os.read(fd, READ_CHUNK_BYTES)
        except OSError:
            data = b""
        if not data:
            self.pipes.close(fd)
            return
        self.pipes.copies[fd].put(data, None if self.exited_at is None else 2 * TERMINAL_BACKLOG_BYTES)
        self.log.write(data)
        self.output.add(data)

    @property
    def tail(self):
        return b"".join(self.output.pieces)

    def tail_bytes(self):
        return self.output.bounded()

    def _settle(self):
        """The child's last output into the log, never waiting for a reader: read until no
        pipe has data now (a leftover process may hold one open and write on; drain() goes on
        with it), for at most SETTLE_S."""
        until = self.exited_at + SETTLE_S
        while self.pipes.copies and self._read_ready(0) and time.time() < until:
            pass

    def finish_terminal(self):
        """Our outputs get until TERMINAL_GRACE_S after the exit to take what is queued; one
        that has not is given up, with one line on stderr, so we exit with the child's status."""
        # the grace is from the exit; a copy not held in a write (the work after the exit took
        # the grace on a loaded node) still gets TERMINAL_GRACE_S: its lines are the summary
        left = max(READER_STALL_S, self.exited_at + TERMINAL_GRACE_S - time.time())
        since = time.time()  # one bound for stdout and stderr, not one each
        stuck = [c for c in set(TERMINAL_COPIES.values()) if not c.wait_idle(left, TERMINAL_GRACE_S, since)]
        for copy in stuck:
            copy.give_up()
        if stuck:
            what = "terminal" if any(_isatty(c.fd) for c in stuck) else "reader of our output"
            _warn("the %s had not taken the output %.0fs after the command ended; stopped copying "
                  "to it (the log has everything)" % (what, max(TERMINAL_GRACE_S, time.time() - self.exited_at)))
            flush_terminal(0.5)

    def drain(self, seconds):
        """Leftover processes (a background uploader) still hold the pipes: keep logging their
        output in a thread until end of file or `seconds` after the exit. Never blocks."""
        if self.pipes.copies:
            self.output.frozen = True
            self.drained = Background(lambda: self._drain(self.exited_at + seconds), report=True)

    def _drain(self, until):
        while self.pipes.copies and time.time() < until:
            self._read_ready(min(POLL_S, max(0.0, until - time.time())))
        if not self.pipes.copies:
            return False
        hand_off_pipes(list(self.pipes.copies))
        for fd in list(self.pipes.copies):
            os.close(fd)
        self.pipes.copies.clear()
        return True

    def finish_drain(self, seconds):
        """Wait for the drain (until `seconds` after the exit) and say in the log what it did."""
        if self.drained is None:
            return
        left = self.drained.result(max(0.0, self.exited_at + seconds + 1.0 - time.time()))
        end = ("still held by processes the command left behind after %.1fs: what they write from "
               "now on is discarded (they are not killed)" % seconds if left is not False
               else "end of file")
        self.log.record("output after the command ended", [
            ("bytes", self.output.bytes - self.bytes_at_exit),
            ("drained for", "%.1fs" % (time.time() - self.exited_at)), ("end", end)], sync=False)

    def _check_stall(self, now):
        stall = self.cfg.get("stall")
        silent = now - self.output.last_at
        if stall and silent >= stall:
            self.stall_s = max(self.stall_s, silent)
            if not self.stall_sent and self.on_stall:
                self.stall_sent = True
                self.on_stall(silent)

    def _reap(self):
        flags = os.WNOHANG | (os.WUNTRACED if self.mirror_stops else 0)
        try:
            pid, status, usage = os.wait4(self.pid, flags)
        except ChildProcessError:
            self.exit_code = self.exit_code if self.exit_code is not None else -signal.SIGKILL
            return
        if pid == 0:
            return
        if os.WIFSTOPPED(status):
            self._follow_stop(os.WSTOPSIG(status))
            return
        self.exit_code = -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
        self.rusage = {"maxrss_kib": int(usage.ru_maxrss), "utime_s": round(usage.ru_utime, 3),
                       "stime_s": round(usage.ru_stime, 3)}

    def _follow_stop(self, signum):
        """Ctrl-Z (or a read from the terminal in the background) stopped the child: stop
        too, so the shell sees the job stopped and takes the terminal; on `fg`/`bg`, go on."""
        import threading
        self._take_terminal()
        if signum not in (signal.SIGTSTP, signal.SIGTTIN, signal.SIGTTOU):
            signum = signal.SIGSTOP
        # Thread-directed, so it stops us before returning; an orphaned group ignores it.
        signal.pthread_kill(threading.current_thread().ident, signum)
        if self.tty is not None and _foreground(self.tty) == os.getpgrp():  # fg: ours again
            _set_foreground(self.tty, self.pid)
        try:
            os.killpg(self.pid, signal.SIGCONT)
        except OSError:
            _send(self.pid, signal.SIGCONT)

    def _take_terminal(self):
        """The child's group has the terminal: give it back to ours (then the shell's)."""
        if self.tty is not None and _foreground(self.tty) == self.pid:
            _set_foreground(self.tty, os.getpgrp())


_DISCARD_CODE = ("import os, select, signal, sys\n"
                 "signal.pthread_sigmask(signal.SIG_SETMASK, [])\n"
                 "fds = [int(a) for a in sys.argv[1:]]\n"
                 "p = select.poll()\n"
                 "for fd in fds: p.register(fd, select.POLLIN)\n"
                 "while fds:\n"
                 "    for fd, _ in p.poll():\n"
                 "        if not os.read(fd, 1 << 16):\n"
                 "            p.unregister(fd); fds.remove(fd)\n")


def hand_off_pipes(fds):
    """Leftover processes still write to these pipes: give the read ends to a detached reader
    that discards what comes, so their writes go on succeeding (no SIGPIPE) after we exit."""
    import subprocess
    try:
        start_helper([sys.executable, "-I", "-S", "-c", _DISCARD_CODE] + [str(fd) for fd in fds],
                     pass_fds=fds, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                     stderr=subprocess.DEVNULL)
    except OSError:
        pass  # cannot start one: closing the pipes is all that is left


def _isatty(fd):
    try:
        return os.isatty(fd)
    except OSError:
        return False


def _send_tree(pid, signum):
    """Signal the child and every descendant, children first found, like a scheduler ending
    a job: a shell script's own children would otherwise outlive --timeout, holding GPUs."""
    for target in [pid] + _descendants(pid):
        _send(target, signum)


def _takes_signal(pid, signum):
    """Does this process catch the signal, or block it (to wait for it, as gpualert does)?
    From /proc/PID/status's SigCgt and SigBlk masks (bit N-1 for signal N)."""
    try:
        with open("/proc/%d/status" % pid) as handle:
            masks = dict(line.split(":", 1) for line in handle if line.startswith(("SigCgt", "SigBlk")))
        return any(int(masks[key], 16) >> (signum - 1) & 1 for key in ("SigCgt", "SigBlk"))
    except (OSError, ValueError, KeyError):
        return False


def _descendants(pid):
    parents = {}
    for entry in os.listdir("/proc") if os.path.isdir("/proc") else []:
        if entry.isdigit():
            try:
                with open("/proc/%s/stat" % entry) as handle:
                    fields = handle.read().rsplit(")", 1)[1].split()
                parents.setdefault(int(fields[1]), []).append(int(entry))
            except (OSError, IndexError, ValueError):
                continue
    found, todo = [], [pid]
    while todo:
        kids = parents.get(todo.pop(), [])
        found += kids
        todo += kids
    return found


def _send(pid, signum):
    try:
        os.kill(pid, signum)
    except OSError:
        pass  # ESRCH: the process is gone, which is what the signal was for


def _child_already_signalled(info, sender, pid):
    """Did this signal reach the child too? Then forwarding it would deliver it twice.

    The child has a process group of its own, so a signal sent to ours (timeout(1),
    kill -SIG -PGID, the terminal's Ctrl-C if the child could not be made the foreground
    job) did not reach it, unless setpgid failed and it is still in ours. A scheduler's
    daemon signals every process of the job step. Slurm's `--signal=B:SIG` reaches only the
    batch shell, so a USR1/USR2 that a daemon sent to a batch-script wrapper (no
    SLURM_STEP_ID) must still be passed on, and so must its INT, HUP or QUIT (scancel --batch,
    even --full: seen on 22.05 to miss a child in a group of its own); the batch step's
    daemon signals every process only to end the job, with a SIGTERM, so a SIGTERM is either
    and only Slurm's record can say (None). SGE's shepherd sends s_rt's USR1 and
    -notify's USR2 to the job's process group and, for processes not owned by root, to every
    process that carries the job's additional group id: a root job's child, in a process
    group of its own, still needs them; an ordinary user's child already has them.
    """
    if sender == "kernel":
        return _same_group(pid)
    if sender not in SCHEDULER_DAEMONS:
        return False
    if sender == "sge_shepherd":
        return _same_group(pid) or _carries_sge_job_group(pid)
    step = os.environ.get("SLURM_STEP_ID")
    if step and step != "batch":
        return True
    if info.si_signo in (signal.SIGUSR1, signal.SIGUSR2):
        return False
    if sender != "slurmstepd":
        return True
    return None if info.si_signo == signal.SIGTERM else False


def _same_group(pid):
    try:
        return os.getpgid(pid) == os.getpgrp()
    except OSError:
        return False


def _carries_sge_job_group(pid):
    """Does SGE signal this process itself? Its execd tags each job's processes with an
    additional group id (`$SGE_JOB_SPOOL_DIR/addgrpid`) and signals every tagged process
    but root's (seen on Debian's gridengine 8.1: a setsid'd grandchild of a user's job
    got s_rt's USR1 once, a root job's did not)."""
    try:
        with open(os.path.join(os.environ.get("SGE_JOB_SPOOL_DIR", ""), "addgrpid")) as handle:
            job_gid = int(handle.read().split()[0])
        with open("/proc/%d/status" % pid) as handle:
            fields = dict(line.split(":", 1) for line in handle if ":" in line)
        owner = int(fields["Uid"].split()[1])  # the effective uid
    except (OSError, ValueError, IndexError, KeyError):
        return False
    return owner != 0 and str(job_gid) in fields.get("Groups", "").split()


def _signal_sender(info):
    """Who sent a signal: "kernel" (the terminal's Ctrl-C), the sender's process name, or
    "pid N" once that process is gone."""
    if info.si_code == SI_KERNEL:
        return "kernel"
    try:
        with open("/proc/%d/comm" % info.si_pid) as handle:
            return handle.read().strip()
    except (OSError, ValueError):
        return "pid %d" % info.si_pid


# ==== Edges: the run's facts (metrics, checkpoints, the job's output file) ====

def run_metrics(log_path, cwd, start, run_dir, wanted=None, *, signals=()):
    """After exit: the log's metrics, plus the checkpoint to resume from (the run's own:
    named by its log or found under cwd, written since the start) and the job's output file."""
    metrics = _safely(lambda: extract_log_metrics(log_path, wanted), {}) or {}
    found = _safely(lambda: named_checkpoints(metrics.get("saved"), cwd, start), []) or []
    if not found:  # no save line: a file the scan finds counts only if nothing ties it to another run
        others = _safely(lambda: other_runs_cwds(run_dir, start), None)
        scanned = _safely(lambda: find_checkpoints(cwd, start, [run_dir]), []) or []
        found = [c for c in scanned if others is not None and not _is_under(os.path.realpath(c["path"]), others)]
        if len(found) < len(scanned):
            metrics["checkpoint_untold"] = True  # files another run may have written: none offered
    read = [os.path.realpath(os.path.join(cwd or "", os.path.expanduser(p))) for p in metrics.get("loaded") or ()]
    found = [c for c in found if os.path.realpath(c["path"]) not in read]
    ckpt = _safely(lambda: choose_checkpoint(found, metrics, signals), None)
    if ckpt:
        metrics["checkpoint"] = ckpt
    out = _safely(job_output_file, None)
    if out:
        metrics["job_output"] = out
    return metrics


def job_output_mark():
    """(dev, ino, size) of the job's output file before the child writes to it, when stdout
    and stderr are that one regular file (sbatch's slurm-%j.out, `> out.log 2>&1`): it then
    gets the child's output in the log's order, so a log line maps to a line of it. Only
    the size is taken now: the lines before it are counted after the run, off the start."""
    if not job_output_file() or not same_output(1, 2):
        return None
    st = os.fstat(1)
    return (st.st_dev, st.st_ino, st.st_size) if st.st_size <= JOB_OUTPUT_COUNT_MAX_BYTES else None


# ==== Edges: the outbox ====

#
# The spool. It is generic over what it holds, so the chat channels reuse it as it is: a
# spooled item is one file "<UTC time>-<pid>-<random>.<kind>" (kind "eml": an e-mail whose
# first line is an X-Gpualert-Outbox-Reason header; any other kind: bytes its sender reads
# back, e.g. "json" for a chat record) in a private directory. The life of an item:
#   spool_item(data, kind, cfg) -> (path, errors)   written as .tmp-NAME~writing~HOST~PID~
#                             LENGTH~CRC32, fsync'd, renamed, mode 0600, directory fsync'd,
#                             in the first place of the chain (spool_places) that takes it;
#                             path None if none did
#   adopt_orphans(place)                            a .tmp- file whose writer died: renamed to
#                             its item if its length and CRC say it is whole, else to dead/
#   claim_item(path) -> claimed path or None        atomic rename to NAME~claimed~HOST~PID~TIME:
#                             exactly one process wins; None: another one has it (or it is gone)
#   spool_over(claimed, data) -> claimed            new bytes for an item we hold claimed, in
#                             one os.replace (a run's full message over its provisional one)
#   finish_item(claimed)                            the transport accepted it: unlink
#   release_item(claimed) -> path                   not sent now (a transient failure): back
#   bury_item(claimed, reason) -> path              refused for good: PLACE/dead/NAME, the reason
#                             in an X-Gpualert-Dead-Reason header (eml) or in NAME.reason
#   ready_items(place, kinds) -> [path]             unclaimed items oldest first, plus claims
#                             whose owner died on this host or whose lease (CLAIM_LEASE_S) ran out
#   search_places(cfg) -> ([place], [refusal line]) every place an item can have gone
#   private_dir(path, create) -> path               0700, ours, not writable by group/others
# A send is always claim, transport, then finish / release / bury: two resends, a resend and
# a run, or fifty runs at once send each item once, wherever it is. The one window left is a
# SIGKILL between the transport's acceptance and the unlink (microseconds).
# A run's full message normally replaces its stand-in in place (spool_over). When it cannot
# (the stand-in's place turned read-only) it is spooled apart, and a .superseded-BASE mark
# beside it, made before it appears, tells any sender that claims the stand-in BASE to drop
# it (drop_superseded): one of the two is sent, never both.
#
# The chain (README "Where messages wait"): the outbox (--outbox, default
# $XDG_STATE_HOME/gpualert/outbox), then <log-dir>/outbox, then $TMPDIR/gpualert-UID/outbox,
# and if that directory belongs to someone else or others may write to it, a fresh private
# $TMPDIR/gpualert-UID-XXXXXX/outbox. Nothing else is ever read from or written to.

CLAIM_MARK = "~claimed~"
DEAD_DIR = "dead"


def _outbox_dir(cfg):
    return os.path.expanduser(cfg.get("outbox") or os.path.join(_state_dir(), "outbox"))


def private_dir(path, create=True):
    """`path` as a directory only this user can write to: created 0700 (parents too) if
    missing and `create`; refused (OSError naming why) if it is a link or not ours; made
    0700 if it is ours but writable by group or others. -> path."""
    if create:
        try:
            make_private_dirs(path)
        except FileExistsError:
            pass
    st = os.lstat(path)
    if stat.S_ISLNK(st.st_mode):
        raise OSError(errno.ELOOP, "%s is a symbolic link: refused" % path)
    if not stat.S_ISDIR(st.st_mode):
        raise OSError(errno.ENOTDIR, "%s is not a directory" % path)
    if st.st_uid != os.geteuid():
        raise OSError(errno.EPERM, "%s is owned by uid %d, not by you: refused" % (path, st.st_uid))
    if st.st_mode & 0o022:  # ours, made under umask 002 (or by an older gpualert): tighten it
        _tighten_dir(path)
    return path


def _tighten_dir(path):
    """chmod 0700 the directory itself, never what a link swapped in meanwhile points to.
    Items other users planted while it was open stay unsent: spool listings take ours only."""
    fd = open_own_dir(path)
    try:
        os.fchmod(fd, 0o700)
    finally:
        os.close(fd)


def read_regular(path, max_bytes, own=False, head=False):
    """The bytes of `path` if it is a regular file, not a link, and (own) ours: a FIFO, a
    device or a planted link is refused (OSError naming why) without blocking, and no more
    than max_bytes are read (more: ValueError, or with `head` its first max_bytes).
    -> (bytes, os.stat_result of what was read)."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(path, flags | getattr(os, "O_CLOEXEC", 0))
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise OSError(errno.EINVAL, "not a regular file")
        if own and st.st_uid != os.geteuid():
            raise OSError(errno.EPERM, "owned by uid %d, not by you" % st.st_uid)
        chunks, size = [], 0
        while size <= max_bytes:
            chunk = os.read(fd, min(1 << 20, max_bytes + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    finally:
        os.close(fd)
    if size > max_bytes and not head:
        raise ValueError("bigger than %s" % _format_size(max_bytes))
    return b"".join(chunks)[:max_bytes], st


def read_json_file(path, max_bytes):
    """The JSON value of a bounded file of ours (read_regular); ValueError for one torn,
    too big or nested too deeply to read, as a damaged or planted one may be."""
    import json
    data, _ = read_regular(path, max_bytes, own=True)
    try:
        return json.loads(data.decode("utf-8"))
    except RecursionError:
        raise ValueError("nested too deeply to read")


_TEMP_ROOT = []


def _temp_dir():
    """The one place gpualert asks for the temp dir ($TMPDIR, else a writable default)."""
    import tempfile
    return tempfile.gettempdir()


def temp_root():
    """This user's private directory in the temp dir: $TMPDIR/gpualert-UID, or, when someone
    else made that name first (or may write to it), a fresh $TMPDIR/gpualert-UID-XXXXXX.
    Created on first use, then the same for the whole process."""
    if not _TEMP_ROOT:
        fixed = os.path.join(_temp_dir(), "gpualert-%d" % os.getuid())
        try:
            _TEMP_ROOT.append(private_dir(fixed))
        except OSError as exc:
            import tempfile
            _warn("warning: %s; using a new private directory instead" % _describe(exc))
            _TEMP_ROOT.append(tempfile.mkdtemp(prefix="gpualert-%d-" % os.getuid(),
                                               dir=_temp_dir()))
    return _TEMP_ROOT[0]


def spool_places(cfg):
    """The fixed chain a new item is written to: first that works wins. The temp entry is
    None: resolved (temp_root) only if the places before it all failed."""
    places = [_outbox_dir(cfg)]
    if cfg.get("log_dir"):
        places.append(os.path.join(os.path.expanduser(cfg["log_dir"]), "outbox"))
    return places + [None]


def search_places(cfg):
    """Every place an item can be: the chain, for $TMPDIR and /tmp alike, with the fresh
    private fallbacks. -> (places that are ours, lines saying which were refused and why)."""
    import glob
    uid = os.getuid()
    places = [_outbox_dir(cfg)]
    if cfg.get("log_dir"):
        places.append(os.path.join(os.path.expanduser(cfg["log_dir"]), "outbox"))
    places += _recorded_places(os.path.join(_state_dir(), PLACES_FILE))
    for tmp in _unique([_temp_dir(), "/tmp"]):
        # temp_root's fixed name and its fresh fallbacks: each may hold an outbox and an index
        for root in [os.path.join(tmp, "gpualert-%d" % uid)] + sorted(
                glob.glob(os.path.join(tmp, "gpualert-%d-*" % uid))):
            places.append(os.path.join(root, "outbox"))
            if _safely(lambda: private_dir(root, create=False), None):
                places += _recorded_places(os.path.join(root, PLACES_FILE))
        places.append(os.path.join(tmp, "gpualert-outbox-%d" % uid))  # 0.4.0 and earlier
    ours, refused = [], []
    for place in _unique(places):
        if not os.path.lexists(place):
            continue
        try:
            private_dir(os.path.dirname(place), create=False) if _in_temp(place) else None
            ours.append(private_dir(place, create=False))
        except OSError as exc:
            refused.append(_describe(exc))
    return ours, refused


def _in_temp(place):
    """Is `place` one of the chain's temp-dir entries (whose parent must be ours too)?"""
    return os.path.basename(os.path.dirname(place)).startswith("gpualert-%d" % os.getuid())


def _unique(items):
    seen, out = set(), []
    for item in items:
        key = os.path.realpath(item) if os.path.exists(item) else item
        if key not in seen:
            seen.add(key)
            out.append(item)
    return out


def _item_name(kind):
    now = time.time()
    return "%s.%06dZ-%d-%s.%s" % (time.strftime("%Y%m%dT%H%M%S", time.gmtime(now)),
                                  int((now % 1) * 1e6), os.getpid(), os.urandom(3).hex(), kind)


TMP_PREFIX = ".tmp-"
WRITING_MARK = "~writing~"  # .tmp-NAME~writing~HOST~PID~LENGTH~CRC32: a new item being written
OVER_MARK = "~over~"        # the same, for new bytes that replace the item NAME (spool_over)
SUPERSEDED_PREFIX = ".superseded-"  # .superseded-BASE: the stand-in BASE must not be sent


def _tmp_name(name, data, *, over=False, pid=None):
    """The name an item is written under before its rename. It says who writes it (an orphan
    whose writer died is adopted: adopt_orphans) and how many bytes with which CRC-32 make
    it whole: a SIGKILL inside the write leaves fewer bytes, a crash inside the fsync may
    leave the length right but blocks unwritten (zeros); either fails the check."""
    import binascii
    return _tmp_label(name, over, os.getpid() if pid is None else pid, len(data),
                      binascii.crc32(data) & 0xffffffff)


def _tmp_label(name, over, pid, length, crc):
    return "%s%s%s%s~%d~%d~%08x" % (TMP_PREFIX, name, OVER_MARK if over else WRITING_MARK,
                                    _owner_tag(), pid, length, crc)


def _tmp_parts(name):
    """.tmp-NAME~writing~HOST~PID~LENGTH~CRC -> (NAME, over, host, pid, length, crc); None for
    any other name (an older gpualert's .tmp-NAME says nothing of its writer: left alone)."""
    if not name.startswith(TMP_PREFIX):
        return None
    for mark in (WRITING_MARK, OVER_MARK):
        target, found, rest = name[len(TMP_PREFIX):].rpartition(mark)
        if found and target:
            try:
                host, pid, length, crc = rest.rsplit("~", 3)
                return target, mark == OVER_MARK, host, int(pid), int(length), int(crc, 16)
            except ValueError:
                return None
    return None


def _write_private(folder, name, data, *, over=False, before_rename=None):
    """data as folder/name: written under its _tmp_name, fsync, rename, fsync of the
    directory. before_rename(folder): called once the bytes are durable, before they
    appear under `name`. -> path."""
    tmp = os.path.join(folder, _tmp_name(name, data, over=over))
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        if before_rename:
            before_rename(folder)
        os.replace(tmp, os.path.join(folder, name))
    except BaseException:
        _remove_quietly(tmp)
        raise
    _fsync_dir(folder)
    return os.path.join(folder, name)


def _fsync_dir(folder):
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass  # some file systems cannot sync a directory; the rename is still atomic
    finally:
        os.close(fd)


def spool_in(folder, data, kind, claimed=False, *, before_rename=None):
    """One item in `folder` (made private first). -> path; OSError if it cannot.
    claimed: it appears already claimed by this process (nobody sends it while we live)."""
    name = _item_name(kind)
    if claimed:
        name = "%s%s%s~%d~%d" % (name, CLAIM_MARK, _owner_tag(), os.getpid(), int(time.time()))
    return _write_private(private_dir(folder), name, data, before_rename=before_rename)


def spool_item(data, kind, cfg, places=None, claimed=False, *, before_rename=None):
    """data (bytes) as a new item of `kind` in the first place of the chain that takes it;
    a place other than the outbox is recorded (record_place). -> (path or None, [one line
    per place that failed])."""
    errors = []
    for folder in places or spool_places(cfg):
        try:
            folder = folder or os.path.join(temp_root(), "outbox")
            path = spool_in(folder, data, kind, claimed, before_rename=before_rename)
        except Exception as exc:
            errors.append("%s: %s" % (folder, _describe(exc)))
            continue
        if os.path.abspath(folder) != os.path.abspath(_outbox_dir(cfg)):
            _safely(lambda: record_place(folder), None)
        return path, errors
    return None, errors


# Every fallback is found: a place of the chain other than the outbox (<log-dir>/outbox, a
# fresh private temp folder) is recorded, one absolute path a line, in PLACES_FILE in the
# state dir, or, when that cannot be written (a read-only or full home), in this user's
# private temp dir (then only a resend on the same host, or given --log-dir, finds it).
# search_places reads both; a recorded place that is a link, not ours or open to others is
# refused there like any other (private_dir).
PLACES_FILE = "outbox-places"


PLACES_MAX_BYTES = 16 << 10  # past this the index is rewritten with the places still in use
PLACES_READ_MAX_BYTES = 64 << 20  # what is read of one (it stays near the size above)


def record_place(folder):
    """Add folder to the first index that takes it (see above); nothing if it is there.
    Under the index's lock: a rewrite (_prune_places) must not drop another's append."""
    folder = os.path.abspath(folder)
    if "\n" in folder:
        return
    for index_dir in (_state_dir(), temp_root()):
        try:
            path = os.path.join(private_dir(index_dir), PLACES_FILE)
            lock = _locked(path + ".lock")
            try:
                _add_place(path, folder)
            finally:
                _unlock(lock)
            return
        except (OSError, GpuAlertError):
            continue


def _add_place(path, folder):
    known = _recorded_places(path)
    if folder in known:
        return
    if os.path.exists(path) and os.path.getsize(path) > PLACES_MAX_BYTES:
        _prune_places(path, known)
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(path, flags, 0o600)
    try:
        os.write(fd, (folder + "\n").encode("utf-8", "surrogateescape"))
        os.fsync(fd)
    finally:
        os.close(fd)


def _prune_places(path, known):
    """The index rewritten in one step: each place once, only those that still hold
    something (an emptied or removed folder has nothing left to find)."""
    def holds(place):
        return bool(_safely(lambda: os.path.isdir(place) and os.listdir(place), False))
    kept = [place for place in _unique(known) if holds(place)]
    data = "".join(place + "\n" for place in kept).encode("utf-8", "surrogateescape")
    _write_private(os.path.dirname(path), os.path.basename(path), data, over=True)


def _recorded_places(path):
    """The places an index names, all of it (record_place keeps it small); [] unless it
    is our own plain file."""
    try:
        data = read_regular(path, PLACES_READ_MAX_BYTES, own=True, head=True)[0]
    except (OSError, ValueError):
        return []
    lines = data.decode("utf-8", "surrogateescape").splitlines()
    return [line for line in lines if os.path.isabs(line)]


def spool_over(claimed, data):
    """data in place of an item this process holds claimed, in one os.replace that keeps the
    claim: there is never a moment with both on disk, so a SIGKILL leaves one item to send,
    never two (the run's full message over its provisional stand-in). -> claimed; OSError
    (ENOENT) if the item is no longer there (another process took the claim over)."""
    folder, name = os.path.split(claimed)
    if not os.path.exists(claimed):
        raise OSError(errno.ENOENT, "%s is gone" % claimed)
    return _write_private(folder, name, data, over=True)


def _claim_parts(name):
    """NAME~claimed~HOST~PID~TIME -> (NAME, host, pid, time); (name, None, None, None) if unclaimed."""
    base, mark, rest = name.partition(CLAIM_MARK)
    if not mark:
        return name, None, None, None
    try:
        host, pid, when = rest.rsplit("~", 2)
        return base, host, int(pid), int(when)
    except ValueError:
        return base, "?", 0, 0


def claim_item(path):
    """Take the item for sending: one atomic rename, so exactly one process wins.
    -> the claimed path, or None if it is gone (someone else has it). OSError if the place
    cannot be written (a read-only outbox: the item is left alone, never sent twice)."""
    folder, name = os.path.split(path)
    base = _claim_parts(name)[0]
    claimed = os.path.join(folder, "%s%s%s~%d~%d" % (base, CLAIM_MARK, _owner_tag(),
                                                     os.getpid(), int(time.time())))
    try:
        os.rename(path, claimed)
    except OSError as exc:
        if exc.errno == errno.ENOENT:
            return None
        raise
    return claimed


_OWNER_TAG = []


def _owner_tag():
    """Who holds a claim or writes an item, as its name says: the host, and where a pid
    means something: the PID namespace (a container numbers its own) and the boot. A pid is
    checked (_pid_alive) only under the same tag; from another, only the lease can tell."""
    if not _OWNER_TAG:
        tag = _hostname()[:64]
        try:
            with open("/proc/sys/kernel/random/boot_id") as handle:
                boot = re.sub(r"\W", "", handle.read())[:8]
            tag += "@%d-%s" % (os.stat("/proc/self/ns/pid").st_ino, boot)
        except (OSError, ValueError):
            pass  # no /proc (not Linux): the host alone, as before
        _OWNER_TAG.append(tag)
    return _OWNER_TAG[0]


def _owner_gone(name):
    """Is the claim's owner visibly gone: not claimed at all, or its process is no longer
    alive on this host? (Elsewhere only its lease can tell: _unrenewed.)"""
    _, host, pid, _ = _claim_parts(name)
    return host is None or (host == _owner_tag() and pid > 0 and not _pid_alive(pid))


def _owner_stopped(name):
    """Is the claim's owner a process on this host that is stopped (Ctrl-Z, a scheduler's
    suspend: SIGSTOP)? It cannot renew, yet it is not gone: its claim is not taken over."""
    _, host, pid, _ = _claim_parts(name)
    if host != _owner_tag() or not pid or pid <= 0:
        return False
    try:
        with open("/proc/%d/stat" % pid) as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] in ("T", "t")
    except (OSError, IndexError):
        return False


# Leases, not clocks. A live owner renews what it holds claimed every LEASE_RENEW_S (the
# run rewrites its stand-in; a sender touches the message it sends), which changes the
# file's identity (inode, size, mtime, ctime: the "token"). A reader takes a claim over only
# when it saw the same token CLAIM_LEASE_S apart on its own clock since boot (/proc/uptime:
# no wall-clock jump, skew between nodes or faketime moves it). The sightings are kept per
# reader host and boot in PLACE/.leases~HOST~BOOT, so two cron resends CLAIM_LEASE_S apart
# decide it; the time written in a claim's name is never compared with anything.
LEASES_PREFIX = ".leases~"


def _boot_clock():
    """(boot id, seconds since boot) of this host: Linux's /proc, else time.monotonic()
    (whose start a reboot resets: a sighting from the future is simply made again)."""
    try:
        with open("/proc/sys/kernel/random/boot_id") as handle:
            boot = handle.read().strip()
        with open("/proc/uptime") as handle:
            return boot, float(handle.read().split()[0])
    except (OSError, ValueError, IndexError):
        return "monotonic", time.monotonic()


def _lease_token(st):
    return "%d:%d:%d:%d" % (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def _unrenewed(place, tokens, clock=None):
    """The names in {name: token} whose token this host saw unchanged for CLAIM_LEASE_S.
    Records new sightings (best effort: a place we cannot write to only delays a takeover,
    never hastens one). clock: -> (boot id, seconds), for tests."""
    import json
    boot, now = (clock or _boot_clock)()
    index = "%s%s~%s" % (LEASES_PREFIX, _hostname()[:64], re.sub(r"\W", "", boot)[:40])
    path = os.path.join(place, index)
    try:
        seen = read_json_file(path, RECORD_MAX_BYTES)
        seen = seen if isinstance(seen, dict) else {}
    except (OSError, ValueError):
        seen = {}
    lapsed = set()
    keep = dict((name, old) for name, old in seen.items()  # other callers' sightings
                if name not in tokens and os.path.lexists(os.path.join(place, name)))
    for name, token in tokens.items():
        old = seen.get(name)
        if isinstance(old, list) and len(old) == 2 and old[0] == token and \
                isinstance(old[1], (int, float)) and old[1] <= now:
            keep[name] = old
            if now - old[1] >= CLAIM_LEASE_S:
                lapsed.add(name)
        else:
            keep[name] = [token, now]
    if not keep and seen:
        _safely(lambda: os.remove(path), None)  # nothing is held here now
    elif keep != seen:
        _safely(lambda: _write_private(place, os.path.basename(path),
                                       json.dumps(keep).encode("ascii")), None)
    return lapsed


def renew_claim(claimed):
    """A live owner's sign of life on what it holds claimed (see _unrenewed). False: the
    item is gone (taken over, or settled)."""
    try:  # a later mtime than it has, whatever this host's clock says: the token changes
        mtime = max(int(time.time() * 1e9), os.stat(claimed).st_mtime_ns + 1000)
        os.utime(claimed, ns=(mtime, mtime))
        return True
    except OSError:
        return False


class Renewing(object):
    """with Renewing(path): renew_claim(path) every LEASE_RENEW_S while the block runs (a
    slow relay must not make a message look abandoned)."""

    def __init__(self, claimed, every=None):
        import threading
        self.claimed, self.every, self.stop = claimed, every or LEASE_RENEW_S, threading.Event()

    def __enter__(self):
        import threading
        threading.Thread(target=self._run, daemon=True).start()
        return self

    def _run(self):
        while not self.stop.wait(self.every) and renew_claim(self.claimed):
            pass

    def __exit__(self, *exc):
        self.stop.set()
        return False


def _pid_alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # EPERM: alive, someone else's
    return pid > 0


def finish_item(claimed):
    """The transport accepted it: it leaves the spool."""
    _remove_quietly(claimed)


def release_item(claimed):
    """Not sent now: back to the spool for a later try. -> its path (claimed if stuck)."""
    folder, name = os.path.split(claimed)
    path = os.path.join(folder, _claim_parts(name)[0])
    try:
        os.rename(claimed, path)
        return path
    except OSError:
        return claimed  # taken over once the lease ends or this process is gone


def bury_item(claimed, reason):
    """Refused for good: PLACE/dead/NAME with the reason, never tried again. -> its path.
    Raises OSError (nothing moved) when dead/ cannot be had."""
    folder, name = os.path.split(claimed)
    base = _claim_parts(name)[0]
    dead = private_dir(os.path.join(folder, DEAD_DIR))
    line = ("X-Gpualert-Dead-Reason: %s\n" % _clean(reason, 500)).encode("utf-8", "replace")
    path = os.path.join(dead, base)
    os.rename(claimed, path)  # first out of the spool in one step: never both dead and sendable

    def add_reason():  # as a header of the message itself, or beside a chat record
        if base.endswith(".eml"):
            with open(path, "rb") as handle:
                _write_private(dead, base, line + handle.read())
        else:
            _write_private(dead, base + ".reason", line)
    _safely(add_reason, None)  # the item is dead already: a missing reason must not undo it
    return path


def bury_or_keep(claimed, reason):
    """bury_item, or where dead/ cannot be had, back to the spool. -> (its path in dead/,
    None) or (its path in the spool, the reason with why it waits there)."""
    try:
        return bury_item(claimed, reason), None
    except OSError as exc:
        return release_item(claimed), "%s; not moved to dead/: %s" % (reason, _describe(exc))


def ready_items(place, kinds=("eml",), clock=None):
    """Items to send in `place`, oldest first: unclaimed ones, and claims whose owner is
    gone or whose lease lapsed (_unrenewed; clock: for tests). Files that are not ours,
    links and half-written .tmp- files are never listed."""
    try:
        names = os.listdir(place)
    except OSError:
        return []
    out, held = [], {}
    for name in sorted(names, key=lambda n: _claim_parts(n)[0]):
        base = _claim_parts(name)[0]
        if name.startswith(".") or base.rsplit(".", 1)[-1] not in kinds:
            continue
        path = os.path.join(place, name)
        try:
            st = os.lstat(path)
        except OSError:
            continue
        if not stat.S_ISREG(st.st_mode) or st.st_uid != os.geteuid():
            continue
        if not _owner_gone(name):
            held[name] = _lease_token(st)
        out.append(path)
    lapsed = _unrenewed(place, held, clock)
    return [p for p in out if os.path.basename(p) not in held or
            (os.path.basename(p) in lapsed and not _owner_stopped(os.path.basename(p)))]


def adopt_orphans(place):
    """Finish what a writer killed mid-write left (a SIGKILL in the fsync of the stand-in
    spooled as the child exits, for one): each .tmp- file whose writer is gone from this
    host, or untouched for CLAIM_LEASE_S, is taken over by one rename (one adopter wins),
    then checked whole against the length and CRC in its name. Whole: renamed to the item
    it was meant to be (an ~over~ one replaces its item only if that can still be claimed:
    else another sender has it, and the new bytes go). Not whole: buried in dead/, never
    sent. -> [one line per file adopted, buried or dropped]."""
    lines = []
    for name in sorted(_listdir(place)):
        parts = _tmp_parts(name)
        if not parts or not _writer_gone(place, name, parts):
            continue
        try:
            lines.append(_adopt_one(place, name, parts))
        except OSError as exc:  # a read-only place: left as it is, adopted by a later resend
            lines.append("%s: an unfinished item not adopted: %s" % (name, _describe(exc)))
    return [line for line in lines if line]


def _writer_gone(place, name, parts):
    """Only our own plain files: a link or someone else's file is never opened or moved."""
    try:
        st = os.lstat(os.path.join(place, name))
    except OSError:
        return False
    if not stat.S_ISREG(st.st_mode) or st.st_uid != os.geteuid():
        return False
    host, pid = parts[2], parts[3]
    if host == _owner_tag() and pid > 0 and not _pid_alive(pid):
        return True
    return name in _unrenewed(place, {name: _lease_token(st)})


def _adopt_one(place, name, parts):
    target, over, _, _, length, crc = parts
    ours = os.path.join(place, _tmp_label(target, over, os.getpid(), length, crc))
    try:
        os.rename(os.path.join(place, name), ours)  # the takeover: one adopter wins
    except OSError as exc:
        if exc.errno == errno.ENOENT:
            return None
        raise
    os.utime(ours)
    base = _claim_parts(target)[0]
    if over and not _whole(ours, length, crc):  # the item it was to replace still says it all
        _remove_quietly(ours)
        return "%s: half-written new bytes dropped; the item is kept as it was" % base
    if not _whole(ours, length, crc):
        held = os.path.join(place, "%s%s%s~%d~%d" % (base, CLAIM_MARK, _owner_tag(),
                                                      os.getpid(), int(time.time())))
        os.rename(ours, held)
        return "%s: half-written by a process that died; kept in %s, never sent" % (
            base, bury_item(held, "half-written: its writer died before it was whole"))
    if not over:
        os.rename(ours, os.path.join(place, base))
        _fsync_dir(place)
        return "%s: adopted (its writer died before renaming it)" % base
    claimed = claim_item(os.path.join(place, target))
    if claimed is None:  # the item it was to replace is being sent by another process
        _remove_quietly(ours)
        return "%s: its new bytes dropped (the item went out as it was)" % base
    os.replace(ours, claimed)
    _fsync_dir(place)
    release_item(claimed)
    return "%s: adopted the new bytes its writer left" % base


def _whole(path, length, crc):
    import binascii
    try:
        with open(path, "rb") as handle:
            if os.fstat(handle.fileno()).st_size != length:  # never read a made-up length
                return False
            data = handle.read(length + 1)
    except OSError:
        return False
    return len(data) == length and binascii.crc32(data) & 0xffffffff == crc


def _superseded_marks(base, places):
    """The .superseded-BASE marks that say the stand-in BASE must not be sent."""
    marks = [os.path.join(place, SUPERSEDED_PREFIX + base) for place in places]
    return [mark for mark in marks if os.path.lexists(mark)]


def _mark_superseded(stand_in):
    """-> before_rename for the full message written apart from its stand-in: in the full
    message's folder, once its bytes are durable and before it appears, a mark saying the
    stand-in must not be sent. So from the moment the stand-in could be sent by anyone (this
    process gone) the mark exists; a sender that claims the stand-in finds it and drops it."""
    def mark(folder):
        path = os.path.join(folder, SUPERSEDED_PREFIX + _claim_parts(os.path.basename(stand_in))[0])
        fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o600)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
    return mark


def drop_superseded(claimed, places):
    """A claimed item whose run spooled its full message apart: remove it and its marks.
    -> True if it was superseded (and is gone), False to send it."""
    base = _claim_parts(os.path.basename(claimed))[0]
    marks = _superseded_marks(base, places + [os.path.dirname(claimed)])
    if not marks:
        return False
    finish_item(claimed)
    for mark in marks:
        _remove_quietly(mark)
    return True


# ---- e-mail in the spool ----

def _was_held(path):
    """Was the message held back on purpose (its stamped outbox reason says "held:")?"""
    return "held:" in (_header_line(path, b"X-Gpualert-Outbox-Reason:") or "")


def _stamp(msg, reason):
    data = msg if isinstance(msg, bytes) else _wire_bytes(msg)
    return ("X-Gpualert-Outbox-Reason: %s\n" % _clean(reason, 300)).encode("ascii", "replace") + data


def save_to_outbox(msg, outbox_dir, reason):
    """msg (EmailMessage or bytes) as one item in outbox_dir (see spool_in). -> the path."""
    return spool_in(outbox_dir, _stamp(msg, reason), "eml")


def spool_message(msg, cfg, reason, claimed=False, over=None):
    """The message in the first place of the chain that takes it. -> (path or None, errors).
    over: a claimed item of ours it replaces (spool_over), keeping the claim if `claimed`,
    else released like any new item."""
    data = _stamp(msg, reason)
    if not over:
        return spool_item(data, "eml", cfg, claimed=claimed)
    try:
        path = spool_over(over, data)
        return (path if claimed else release_item(path)), []
    except OSError as exc:  # taken over, or its place went bad (read-only): a new item that
        why = _describe(exc)  # says it supersedes the stand-in, which may stay behind
    data = _stamp(msg, "%s; supersedes %s" % (reason, _claim_parts(os.path.basename(over))[0]))
    path, errors = spool_item(data, "eml", cfg, claimed=claimed, before_rename=_mark_superseded(over))
    return path, ["%s: %s" % (over, why)] + errors


def _header_from_bytes(data, name):
    try:
        from email import policy
        from email.parser import BytesHeaderParser
        value = BytesHeaderParser(policy=policy.default).parsebytes(data).get(name)
        return str(value).strip() if value else None  # policy.default decodes RFC 2047
    except Exception:
        return None


def _run_dir_of(cfg, data):
    run_dir = _header_from_bytes(data, "X-Gpualert-Run-Dir") or cfg.get("run_dir")
    return run_dir if run_dir and os.path.isabs(run_dir) else None


def _dry_run_dirs(cfg, data):
    """Never the spool: a dry-run message must not be sent by a later resend."""
    run_dir = _run_dir_of(cfg, data)
    return ([run_dir] if run_dir else []) + [None]


def _save_anywhere(data, dirs, reason):
    """(path, [errors]) for the first directory that takes the message; path None if none.
    A None entry is the private temp directory."""
    errors = []
    for folder in dirs:
        try:
            folder = folder or os.path.join(temp_root(), "dry-run")
            return save_to_outbox(data, folder, reason), errors
        except Exception as exc:
            errors.append("%s: %s" % (folder, _describe(exc)))
    return None, errors


def _outbox_detail(reason, path, errors):
    detail = "not sent (%s); saved to %s" % (reason, path)
    if errors:
        detail += " [outbox unusable: %s]" % "; ".join(errors)
    return detail


def _emergency_dump(data, msg):
    """Last resort so no message is lost: the raw message (bounded) on stderr."""
    try:
        if data is None:
            data = str(msg).encode("utf-8", "replace")
        sys.stderr.write(data[:1 << 20].decode("utf-8", "replace") + "\n")
        sys.stderr.flush()
    except Exception:
        pass  # stderr is gone too: nowhere is left to put it


def _refusals(refused):
    return ", ".join("%s (%d %s)" % (a, code, text) for a, (code, text) in sorted(refused.items()))


def _held_claims(place, kind):
    """The items of `kind` in `place` claimed by an owner that is alive or whose lease has
    not lapsed (a running job's stand-in, a message being sent elsewhere): not sendable now."""
    ready = set(ready_items(place, kinds=(kind,)))
    claims = [n for n in _listdir(place) if CLAIM_MARK in n and not n.startswith(".")
              and _claim_parts(n)[0].endswith("." + kind)]
    return [os.path.join(place, n) for n in claims if os.path.join(place, n) not in ready]


class RateLimiter(object):
    """At most per_hour messages per rolling hour, shared by every process that uses the
    same directory (a file of timestamps under a lock). per_hour None or <= 0: no cap.
    When the file cannot be used, it allows (better a message too many than none)."""

    def __init__(self, directory, per_hour, clock=time.time, key="messages"):
        self.dir = directory
        self.per_hour = per_hour
        self.clock = clock
        self.path = os.path.join(directory, "rate-%s.txt" % re.sub(r"[^\w.-]+", "_", key))
        self.notes = []

    def allow(self):
        """Count one message if under the cap. -> True to send, False to hold it back."""
        if not self.per_hour or self.per_hour <= 0:
            return True
        try:
            private_dir(self.dir)
            fd = _locked(self.path + ".lock")
            try:
                return self._take()
            finally:
                _unlock(fd)
        except (OSError, ValueError) as exc:
            if not self.notes:  # said once: a cap silently off is no cap
                _warn("warning: --max-per-hour not applied (%s): %s" % (self.path, _describe(exc)))
            self.notes.append("rate limit not applied: %s" % exc)
            return True

    def _take(self):
        """Each clock counts its own hour: stamps of another host's clock hours off (a shared
        $HOME) are kept for it, not counted here, so neither host erases the other's."""
        now = self.clock()
        stamps = []
        if os.path.exists(self.path):
            with open(self.path) as f:
                stamps = [t for t in map(_float_or_none, f.read().split()) if t is not None]
        stamps = [t for t in stamps if abs(now - t) < 86400.0]  # days off: garbage, dropped
        allowed = sum(1 for t in stamps if -60.0 < now - t < 3600.0) < self.per_hour
        if allowed:
            stamps.append(now)
        tmp = "%s.%d.tmp" % (self.path, os.getpid())
        try:
            with os.fdopen(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w") as f:
                f.write("".join("%.3f\n" % t for t in stamps))
            os.replace(tmp, self.path)
        except OSError:
            _remove_quietly(tmp)  # a full disk: no litter of one file per process
            raise
        return allowed


def _float_or_none(text):
    try:
        return float(text)
    except ValueError:  # a damaged rate file's word: skipped, the file is written anew
        return None


def _limiter(cfg, key="messages"):
    """The hourly cap of one kind of message (e-mail "messages", chat "channels"), or None."""
    if not cfg.get("max_per_hour"):
        return None
    return RateLimiter(_state_dir(), cfg["max_per_hour"], key=key)


def untold_dead_letters(cfg):
    """[(path, reason)] of dead letters (e-mail and chat posts) the user was not told about
    in a message yet. An e-mail's reason is its first header, a post's is in NAME.reason."""
    out = []
    for place in search_places(cfg)[0]:
        dead = os.path.join(place, DEAD_DIR)
        told = _told(dead)
        out += [path for path in ready_items(dead, kinds=("eml", CHANNEL_KIND))
                if os.path.basename(path) not in told and _nameable(os.path.basename(path))]
    # the oldest first, DEAD_NOTE_MAX a message: the next message names the next ones
    return [(path, _header_line(path, b"X-Gpualert-Dead-Reason:")
             or _header_line(path + ".reason", b"X-Gpualert-Dead-Reason:") or "?")
            for path in out[:DEAD_NOTE_MAX]], len(out)


def _nameable(name):
    """A name no line of .told can hold (a line break in it), or no message can show as it
    is (bytes that are not UTF-8), is never one of ours: not named."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return name.splitlines() == [name]


def _told(dead):
    """The names already told, one a line (a name may hold a space; a FIFO never blocks)."""
    try:
        data = read_regular(os.path.join(dead, ".told"), TOLD_MAX_BYTES, head=True)[0]
    except (OSError, ValueError):
        return set()
    return set(data.decode("utf-8", "replace").splitlines())


def _header_line(path, name):
    """The value of the header `name` when it is the file's first line, else None."""
    try:
        first = read_regular(path, 1000, head=True)[0].split(b"\n", 1)[0]
    except (OSError, ValueError):
        return None
    if first.startswith(name):
        return first[len(name):].decode("utf-8", "replace").strip()
    return None


def tell_shown(dead, delivery):
    """Mark told the letters of a DeadNote a delivered message showed: all of them when the
    e-mail went, else those whose entries a post that went showed whole (its "told")."""
    shown = set(range(len(dead.letters))) if delivery.get("outcome") == "sent" else set()
    for post in delivery.get("channels") or ():
        if post.get("outcome") == "sent":
            shown.update(post.get("told") or ())
    mark_told([letter for i, letter in enumerate(dead.letters) if i in shown])


def mark_told(dead_letters):
    """Remember that a delivered message told the user about these dead letters. .told only
    grows, so past half its cap it is written anew with the names still in dead/ (past the
    cap, a new name would be named in every message)."""
    by_folder = {}
    for path, _ in dead_letters:
        by_folder.setdefault(os.path.dirname(path), []).append(os.path.basename(path))
    for folder, names in by_folder.items():
        told = os.path.join(folder, ".told")
        data = "".join(name + "\n" for name in names).encode("utf-8")
        if not _told_to_rewrite(told, len(data)) and _append_told(told, data):
            continue  # else one we may not append to (another owner's): written anew
        kept = [name + "\n" for name in sorted(_told(folder) - set(names))
                if os.path.lexists(os.path.join(folder, name))]  # the new first: read past any cap
        try:
            _write_private(folder, ".told", data + "".join(kept).encode("utf-8"), over=True)
        except OSError as exc:
            _warn("warning: cannot record in %s which dead letters were told (%s): the next "
                  "message names them again" % (told, exc.strerror or _describe(exc)))


def _append_told(told, data):
    """-> True once data is added to .told on a line of its own (after a last line cut
    short, not onto it). Non-blocking: a FIFO planted as .told fails at once."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0)
    try:
        with os.fdopen(os.open(told, flags, 0o600), "ab") as handle:
            handle.write(b"\n" + data)
        return True
    except OSError:
        return False


def _told_to_rewrite(told, adding):
    """A .told past half its cap, or one that is not a regular file (a link, a FIFO: the
    append refuses it, and every message would name the same letters), is written anew."""
    try:
        info = os.lstat(told)
    except OSError:
        return False
    return not stat.S_ISREG(info.st_mode) or info.st_size + adding > TOLD_MAX_BYTES // 2


def dead_letter_note(dead_letters, untold):
    """The oldest dead letters that fit in one note of DEAD_NOTE_CHARS -> DeadNote. untold:
    how many there are in all (the next message names the rest, and only those named are
    marked told)."""
    note = DeadNote(dead_letters[:1], *_dead_text(dead_letters[:1], untold))
    for count in range(2, len(dead_letters) + 1):
        text, entries = _dead_text(dead_letters[:count], untold)
        if len(text) > DEAD_NOTE_CHARS:
            break
        note = DeadNote(dead_letters[:count], text, entries)
    return note


def _dead_text(named, untold):
    """-> (the note, its entries). Letters refused for one reason (one bad address, mostly)
    share it: 'a.eml, b.eml: why'."""
    groups = []
    for path, reason in named:
        if groups and groups[-1][1] == reason:
            groups[-1][0].append(os.path.basename(path))
        else:
            groups.append(([os.path.basename(path)], reason))
    text, entries = "%d %s: " % (untold, DEAD_NOTE_HEAD), []
    for names, reason in groups:  # the names first: a long path, clipped, never hides them
        for i, name in enumerate(names):
            text += ("" if not entries else ", " if i else "; ") + name
            entries.append((name, text + ("," if i < len(names) - 1 else ":")))
        text += ": " + _fit(reason, DEAD_REASON_CHARS)
    folders = sorted(set(os.path.dirname(path) for path, _ in named))
    more = "; %d more: the next message names them" % (untold - len(named)) if untold > len(named) else ""
    return text + " (moved to %s%s)" % (" and ".join(
        _fit(folder, DEAD_PATH_CHARS, head=40, tail=DEAD_PATH_CHARS - 43) for folder in folders), more), entries


def _remove_quietly(path):
    try:
        os.remove(path)
    except OSError as exc:
        if exc.errno != errno.ENOENT:
            sys.stderr.write("gpualert: warning: could not remove %s, which is done with: %s "
                             "(a later resend may send it once more)\n" % (path, exc.strerror))


# ---- arrays and rate limits ----

def _locked(path, wait_s=LOCK_WAIT_S):
    """The one lock helper: an exclusive flock on `path` (created 0600 if needed) -> the
    open fd; release it with _unlock. Gives up with OSError (errno EAGAIN when another holds
    it) after wait_s: a wedged shared filesystem must not hold up the job's exit."""
    import fcntl
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    deadline = time.time() + wait_s
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return fd
        except OSError as exc:
            if exc.errno not in (errno.EAGAIN, errno.EACCES) or time.time() >= deadline:
                os.close(fd)
                raise OSError(exc.errno, "lock %s busy or failing: %s" % (path, exc.strerror))
            time.sleep(0.02)


def _unlock(fd):
    import fcntl
    try:
        fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


# ---- channel records: a chat/push message that is not delivered yet ----
# One spool item of kind "json" per channel and message, beside the .eml files (the spool
# above: private places, atomic claims, dead/). It holds the channel's URL with its token,
# like the config file. Spooled already claimed before the first attempt, so a SIGKILL
# mid-post leaves it for `resend` (a dead owner's claim is taken over); finished once the
# service took it, buried in dead/ when the service refused it for good (4xx but 408/429).

CHANNEL_KIND = "json"


def channel_record(channel, summary, record=None, txn_id=None):
    """The JSON-ready spool record of one channel's message (pure)."""
    return {"kind": "gpualert-channel", "version": 1, "url": channel.url, "service": channel.service,
            "masked": channel.masked, "summary": dict(summary._asdict()),
            "record": record if channel.service == "json" else None, "txn_id": txn_id}


def spool_channel_record(data, cfg, claimed=False):
    """A record into the first place of the spool chain that takes it. -> path or None."""
    return spool_item(_json_body(data), CHANNEL_KIND, cfg, claimed=claimed)[0]


def read_channel_record(path):
    data = read_json_file(path, RECORD_MAX_BYTES)
    if not isinstance(data, dict) or data.get("kind") != "gpualert-channel":
        raise ValueError("not a gpualert channel record")
    return data


def _channel_from_record(data):
    """-> (channel, Brief). ValueError for a record whose parts are not of their kinds
    (crafted or damaged): no request built from it could ever be right."""
    channel = parse_channel(data["url"])
    summary = Brief(**dict((k, data["summary"].get(k)) for k in Brief._fields))
    fields = [tuple(f) for f in summary.fields or []]
    texts = [v for k, v in summary._asdict().items() if k != "fields"] + [data.get("txn_id")]
    if any(v is not None and not isinstance(v, str) for v in texts + [v for f in fields for v in f]) \
            or any(len(f) != 2 for f in fields) or not isinstance(data.get("record") or {}, dict):
        raise ValueError("a part of the record is not of its kind")
    summary = summary._replace(fields=fields)
    try:  # values no builder takes (another version's severity, an empty summary) never will be
        if channel.service != "apprise":  # apprise reads the title and text only
            request_as_built(channel, summary, data.get("record"), data.get("txn_id"))
    except Exception as exc:
        raise ValueError("its record cannot be built into a request (%s)" % _describe(exc))
    return channel, summary


def waiting_items(cfg, kinds=("eml", CHANNEL_KIND)):
    """Paths of the items not delivered yet (claimed or not) in every place of the spool;
    dead ones excluded."""
    return [os.path.join(place, name) for place in search_places(cfg)[0] for name in _listdir(place)
            if _claim_parts(name)[0].rsplit(".", 1)[-1] in kinds and not name.startswith(".")]


def waiting_run_dirs(cfg):
    """The run directories that messages still in the outbox name (X-Gpualert-Run-Dir)."""
    dirs = set()
    for path in waiting_items(cfg, ("eml",)):
        try:
            with open(path, "rb") as handle:
                data = handle.read(64 * 1024)
        except OSError:
            continue
        head = data.split(b"\r\n\r\n", 1)[0].split(b"\n\n", 1)[0]
        found = _header_from_bytes(head + b"\n\n", "X-Gpualert-Run-Dir")
        if found:
            dirs.add(found)
    return dirs


def _listdir(place):
    try:
        return os.listdir(place)
    except OSError:
        return []


def _record_held(path):
    try:
        return bool(read_channel_record(path).get("held"))
    except (OSError, ValueError):
        return False  # gone (another sender has it) or unreadable: the claim decides


def _settle_record(claimed, res):
    """After an attempt: finish (sent), bury (refused for good) or release (try later)."""
    if res.ok:
        finish_item(claimed)
        return "sent", None
    if res.permanent:
        return _dead_letter(claimed, res.detail)
    release_item(claimed)
    return "failed", res.detail


def _dead_letter(claimed, reason):
    """-> ("dead", the line to tell) or, where dead/ cannot be had, ("failed", why it waits)."""
    path, why = bury_or_keep(claimed, reason)
    return ("failed", why) if why else ("dead", "dead letter: %s -> %s" % (reason, path))


# ==== Edges: transports ====

def _outcome(outcome, transport, detail, path=None):
    return {"outcome": outcome, "transport": transport, "detail": detail, "outbox_path": path}


def _local_mail_note(cfg):
    """Whom sendmail was given the message for and, for a bare user name (the default: the
    submitting user, as Slurm's --mail-user is), where that user reads local mail."""
    recipients = _recipients(cfg)
    note = " for %s" % ", ".join(recipients)
    local = [r for r in recipients if "@" not in r]
    if local:
        note += " (local mail: read it with `mail`, or in /var/mail/%s)" % local[0]
    return note


def _mail_timeout(cfg):
    try:
        return max(0.5, float(cfg.get("smtp_timeout") or MAIL_TIMEOUT_S))
    except (TypeError, ValueError):
        return MAIL_TIMEOUT_S


def _send_with_slim_retry(msg, data, cfg, transport, deadline, *, on_accepted=None):
    res = _send_bytes(data, cfg, transport, deadline, on_accepted)
    if res.ok or not res.size_rejected or time.monotonic() >= deadline:
        return res
    reason = "the relay rejected the message size: %s" % res.detail
    try:
        slim = _slim_message(msg, data, reason)
    except Exception as exc:
        return SendResult(ok=False, detail="%s; slim message failed: %s" % (res.detail, _describe(exc)),
                          size_rejected=True)
    again = _send_bytes(slim, cfg, transport, deadline, on_accepted)
    if again.ok:
        return again._replace(detail="%s; sent WITHOUT attachments (%s)" % (again.detail, reason))
    return SendResult(ok=False, detail="%s; retry without attachments also failed: %s" % (
        res.detail, again.detail), size_rejected=True, transport_down=again.transport_down,
        permanent=again.permanent or again.size_rejected)  # even the slim one is too big: for good


def _slim_message(msg, data, reason):
    """Bytes of the message without attachments: rebuilt if we built it, else stripped."""
    hook = getattr(msg, "gpualert_slim", None)
    if hook is not None:
        return hook(reason).as_bytes()
    from email import policy
    from email.message import EmailMessage
    from email.parser import BytesParser
    parsed = BytesParser(policy=policy.default).parsebytes(data)
    names = ["%s" % (a.get_filename() or "unnamed") for a in parsed.iter_attachments()]
    body = parsed.get_body(("plain",))
    text = body.get_content() if body is not None else ""
    slim = EmailMessage()
    for key, value in parsed.items():
        if key.lower() not in ("content-type", "content-transfer-encoding", "mime-version",
                               "content-disposition"):
            slim[key] = value
    note = "NOTE: attachments removed (%s): %s\n\n" % (reason, ", ".join(names) or "none")
    slim.set_content(note + text, cte="quoted-printable")
    _unfolded_headers(slim)
    return slim.as_bytes()


def _choose_transport(cfg):
    """('smtp', hostport) | ('sendmail', path) | ('missing', why) | ('outbox', why)."""
    if cfg.get("smtp"):
        return "smtp", str(cfg["smtp"])
    asked = cfg.get("sendmail")
    if asked == "none":  # said outright: no sendmail, even where the node has one
        return "outbox", "no mail transport configured (no smtp relay set, sendmail none)"
    path = asked or _find_sendmail()
    if path:
        return "sendmail", path
    if asked is not None:
        return "missing", "sendmail requested but not found on PATH or in %s" % (
            ", ".join(SENDMAIL_CANDIDATES))
    return "outbox", "no mail transport configured (no smtp relay set, no sendmail found)"


def _find_sendmail():
    import shutil
    found = shutil.which("sendmail")
    if found:
        return found
    for path in SENDMAIL_CANDIDATES:
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    return None


def _send_bytes(data, cfg, transport, deadline, on_accepted=None):
    kind, where = transport
    if not _safely(lambda: _envelope(data, cfg)[1], None):
        # An empty, torn or foreign file in the outbox: no relay will ever take it. Said as
        # "the transport is down", it stopped every resend before the messages behind it.
        return SendResult(ok=False, permanent=True,
                          detail="the message names no recipient (To/Cc/Bcc): it cannot be sent")
    if kind == "smtp":
        return _send_smtp_bounded(data, cfg, deadline, on_accepted)
    only = _envelope(data, cfg)[1] if data.startswith(RCPT_HEADER.encode("ascii")) else None
    return _send_sendmail(data, where, deadline, only=only)


def _envelope(data, cfg):
    from email import policy
    from email.parser import HeaderParser
    from email.utils import getaddresses, parseaddr
    # as UTF-8 text: the bytes parser turns a raw non-ASCII address into U+FFFDs
    head = HeaderParser(policy=policy.compat32).parsestr(data.decode("utf-8", "replace"))
    sender = cfg.get("from_addr") or head.get("From") or ""
    sender = parseaddr(str(sender))[1]
    fields = [str(v) for v in head.get_all(RCPT_HEADER) or []] or \
        [str(v) for k in ("To", "Cc", "Bcc") for v in (head.get_all(k) or [])]
    rcpts = _one_per_mailbox([addr for _, addr in getaddresses(fields) if addr])
    return sender, rcpts


#: A copy kept for the recipients the relay refused for now is addressed to them alone:
#: this header, first in the message, names its envelope recipients (SMTP and sendmail).
RCPT_HEADER = "X-Gpualert-Rcpt"


def _readdressed(data, addresses):
    """The message bytes, for `addresses` alone (an earlier RCPT_HEADER replaced)."""
    mark = RCPT_HEADER.encode("ascii") + b":"
    while data.startswith(mark):
        data = data.split(b"\n", 1)[-1]
    return mark + b" " + ", ".join(sorted(addresses)).encode("utf-8", "replace") + b"\n" + data


# ---- SMTP ----

def _send_smtp_bounded(data, cfg, deadline, on_accepted=None):
    """Run the SMTP session in a daemon thread and give up at the deadline (getaddrinfo and a
    mute relay cannot be interrupted otherwise); the abandoned socket is shut down."""
    import threading
    state = {"stage": "connect (DNS/TCP/greeting)", "conn": None, "result": None, "cancelled": False,
             "on_accepted": on_accepted}
    worker = threading.Thread(target=_smtp_worker, args=(data, cfg, deadline, state),
                              name="gpualert-smtp")
    worker.daemon = True
    worker.start()
    worker.join(max(0.0, deadline - time.monotonic()))
    if worker.is_alive() or state["result"] is None:
        state["cancelled"] = True
        _abort_conn(state["conn"])
        return SendResult(ok=False, detail="SMTP %s: timed out during %s (smtp_timeout %gs)" % (
            cfg["smtp"], state["stage"], _mail_timeout(cfg)), transport_down=True)
    return state["result"]


def _abort_conn(conn):
    import socket
    sock = getattr(conn, "sock", None)
    try:
        if sock is not None:
            sock.shutdown(socket.SHUT_RDWR)  # wakes a recv blocked in the worker thread
        if conn is not None:
            conn.close()
    except Exception:
        pass  # abandoning a session that already failed: its error is the one reported


def _smtp_worker(data, cfg, deadline, state):
    try:
        state["result"] = _smtp_session(data, cfg, deadline, state)
    except BaseException as exc:
        state["result"] = _smtp_failure(exc, cfg, state["stage"])


def _parse_hostport(spec):
    spec = str(spec).strip()
    m = re.match(r"^\[([^\]]+)\](?::(\d+))?$", spec) or re.match(r"^([^:]+)(?::(\d+))?$", spec)
    if not m:
        raise ValueError("bad smtp relay %r (want host[:port])" % spec)
    return m.group(1), int(m.group(2) or 25)


def _tls_mode(cfg, port):
    mode = str(cfg.get("smtp_tls") or "").lower()
    if mode in ("ssl", "tls", "smtps"):
        return "ssl"
    if mode in ("starttls", "none"):
        return mode
    return "ssl" if port == 465 else "auto"


def _smtp_session(data, cfg, deadline, state):
    import smtplib
    import ssl
    host, port = _parse_hostport(cfg["smtp"])
    mode = _tls_mode(cfg, port)
    sender, rcpts = _envelope(data, cfg)
    if not rcpts:
        raise ValueError("no recipients in To/Cc")
    timeout = max(0.1, deadline - time.monotonic())
    if mode == "ssl":
        state["stage"] = "connect+TLS"
        conn = smtplib.SMTP_SSL(host, port, local_hostname=_hostname(), timeout=timeout,
                                context=ssl.create_default_context())
    else:
        conn = smtplib.SMTP(host, port, local_hostname=_hostname(), timeout=timeout)
    state["conn"] = conn
    try:
        _smtp_prepare(conn, cfg, mode, state)
        if state["cancelled"]:
            return SendResult(ok=False, detail="cancelled", transport_down=True)
        state["stage"] = "MAIL/RCPT/DATA"
        utf8, unsendable = _utf8_plan(conn, sender, rcpts)
        conn.command_encoding = "utf-8" if utf8 else "ascii"  # what smtplib's send_message does
        if len(unsendable) == len(rcpts):
            return SendResult(ok=False, permanent=True, detail="SMTP %s: cannot be sent as it is: %s"
                              % (cfg["smtp"], unsendable[rcpts[0]][1]))
        try:
            refused = dict((a, (code, _clean(_text(text), 200)))  # the relay's bytes, as text
                           for a, (code, text) in (conn.sendmail(
                               sender, [a for a in rcpts if a not in unsendable], _to_crlf(data),
                               mail_options=["SMTPUTF8"] if utf8 else []) or {}).items())
        except smtplib.SMTPRecipientsRefused as exc:  # all the others: these are refused too
            exc.recipients.update(unsendable)
            raise
        refused.update(unsendable)  # refused for good here: a copy for them goes to dead/
        if state.get("on_accepted"):  # settle the spool now, not after QUIT: no resend twice
            _safely(lambda: state["on_accepted"](data, refused), None)
    finally:
        _quit_quietly(conn)
    detail = "SMTP %s accepted it for %s" % (cfg["smtp"],
                                             ", ".join(a for a in rcpts if a not in refused))
    return SendResult(ok=True, detail=detail, refused=refused or None)


def _utf8_plan(conn, sender, rcpts):
    """Non-ASCII addresses go with SMTPUTF8 where the relay offers it; where it does not,
    they cannot go at all (and the others still do). -> (use SMTPUTF8, {address: (553, why)})."""
    wide = [a for a in [sender] + rcpts if re.search(r"[^\x00-\x7f]", a)]
    if not wide or conn.has_extn("smtputf8"):
        return bool(wide), {}
    why = "5.6.7 the address is not ASCII and the relay takes no SMTPUTF8"
    return False, dict((a, (553, why)) for a in rcpts if a in wide)


def _smtp_prepare(conn, cfg, mode, state):
    import ssl
    state["stage"] = "greeting/EHLO"
    conn.ehlo_or_helo_if_needed()
    tls = mode == "ssl"
    if mode == "starttls" or (mode == "auto" and conn.has_extn("starttls")):
        if not conn.has_extn("starttls"):
            raise ValueError("relay does not offer STARTTLS (smtp_tls=starttls)")
        state["stage"] = "STARTTLS"
        conn.starttls(context=ssl.create_default_context())  # verifies; honours SSL_CERT_FILE
        conn.ehlo()
        tls = True
    if cfg.get("smtp_user"):
        if not tls and mode != "none":
            raise ValueError("refusing to send the SMTP password unencrypted "
                             "(relay offers no STARTTLS; set smtp_tls=none to allow)")
        state["stage"] = "AUTH"
        conn.login(str(cfg["smtp_user"]), str(cfg.get("smtp_password") or ""))


def _quit_quietly(conn):
    try:
        conn.quit()
    except Exception:
        try:
            conn.close()
        except Exception:
            pass  # the message was accepted or its failure reported already


def _to_crlf(data):
    return re.sub(b"\r?\n", b"\r\n", data)


def _smtp_failure(exc, cfg, stage):
    """Map an exception to a SendResult with a one-line reason."""
    import smtplib
    import socket
    import ssl
    where = "SMTP %s" % cfg.get("smtp")
    code, text = _smtp_code(exc)
    mixed = _mixed_refusals(exc)
    if mixed:  # every recipient refused, some for now, some for good: each gets its due
        return SendResult(ok=False, refused=mixed,
                          detail="%s refused every recipient: %s" % (where, _refusals(mixed)))
    if code is not None:
        size = code == 552 or (500 <= code < 600 and "size" in text.lower())
        size = size or "5.3.4" in text
        down = isinstance(exc, (smtplib.SMTPAuthenticationError, smtplib.SMTPHeloError))
        return SendResult(ok=False, detail="%s rejected during %s: %d %s" % (where, stage, code, text),
                          size_rejected=size, transport_down=down, permanent=code >= 500 and not down)
    if isinstance(exc, (UnicodeError, smtplib.SMTPNotSupportedError)) and stage == "MAIL/RCPT/DATA":
        return SendResult(ok=False, permanent=True,  # a foreign .eml's sender, say: not the relay's fault
                          detail="%s: cannot be sent as it is: %s" % (where, _describe(exc)))
    if isinstance(exc, ssl.SSLError) or isinstance(exc, ssl.CertificateError):
        why = "TLS failed during %s: %s" % (stage, _describe(exc))
    elif isinstance(exc, socket.gaierror):
        why = "cannot resolve relay host: %s" % _describe(exc)
    elif isinstance(exc, ConnectionRefusedError):
        why = "connection refused"
    elif isinstance(exc, socket.timeout) or "timed out" in str(exc).lower():
        why = "timed out during %s" % stage
    elif isinstance(exc, smtplib.SMTPServerDisconnected):
        why = "relay closed the connection during %s" % stage
    else:
        why = "failed during %s: %s" % (stage, _describe(exc))
    return SendResult(ok=False, detail="%s: %s" % (where, why), transport_down=True)


def _mixed_refusals(exc):
    """{address: (code, text)} when the relay refused every recipient at RCPT, some with
    4xx and some with 5xx; else None (one kind: the first code says it all)."""
    import smtplib
    if not isinstance(exc, smtplib.SMTPRecipientsRefused):
        return None
    refused = dict((a, (code, _clean(_text(text), 200)))
                   for a, (code, text) in (exc.recipients or {}).items())
    kinds = set(code >= 500 for code, _ in refused.values())
    return refused if len(kinds) == 2 else None


def _smtp_code(exc):
    """(code, text) of an SMTP rejection, or (None, '')."""
    import smtplib
    if isinstance(exc, smtplib.SMTPRecipientsRefused):
        codes = list((exc.recipients or {}).values())
        if codes:
            code, text = codes[0]
            return code, _clean(_text(text), 200)
    code = getattr(exc, "smtp_code", None)
    if isinstance(code, int) and code >= 400:
        return code, _clean(_text(getattr(exc, "smtp_error", "")), 200)
    return None, ""


def _text(value):
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


# ---- sendmail ----

def _send_sendmail(data, path, deadline, only=None):
    """only: the envelope recipients of a copy kept for some of them (not -t: the headers
    name everyone the message was for)."""
    import subprocess
    import tempfile
    argv = [path, "-oi", "--"] + list(only) if only else [path, "-t", "-oi"]
    # Its exit status says whether it took the message: stderr goes to a file, not a pipe,
    # so a child it forks that keeps the descriptor (a queue runner) cannot hold us until
    # the deadline, reported "timed out" and later resent: a duplicate.
    with tempfile.TemporaryFile() as errors:
        try:  # own session: at the deadline the whole group is killed, helpers included
            proc = start_helper(argv, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=errors)
        except OSError as exc:
            return SendResult(ok=False, transport_down=True,
                              detail="cannot run %s: %s" % (path, exc.strerror or exc))
        try:
            proc.communicate(data, timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            _kill_session(proc)
            return SendResult(ok=False, detail="%s -t -oi timed out" % path, transport_down=True)
        errors.seek(max(0, os.fstat(errors.fileno()).st_size - 4096))
        err = errors.read()
    if proc.returncode != 0:
        last = _clean(_text(err).strip().splitlines()[-1] if err.strip() else "", 200)
        return SendResult(ok=False, detail="%s -t -oi exited with status %d%s" % (
            path, proc.returncode, (": " + last) if last else ""), size_rejected=_sendmail_size(last),
            permanent=proc.returncode in SENDMAIL_PERMANENT_EXITS)
    return SendResult(ok=True, detail="handed to %s -t -oi" % path)


def _sendmail_size(text):
    """Did sendmail refuse the message for its size? Postfix: "message file too big" (exit
    75); Exim and Sendmail: "message too big", "size exceeds", or a 5.3.4 status."""
    return bool(re.search(r"too (big|large)|size exceed|exceeds? .*size|5\.3\.4", text, re.I))


# ==== Edges: HTTP channels ====

# urllib only: TLS verified with the system's CAs (SSL_CERT_FILE honoured), HTTPS_PROXY,
# HTTP_PROXY and NO_PROXY honoured, no redirect followed (a webhook that answers 3xx would
# otherwise get a GET without the message). Every line that leaves here is masked.

CHANNEL_BODY_MAX_BYTES = 4096      # of a service's answer, read for the error line
RETRY_AFTER_MAX_S = 60.0           # a 429's Retry-After is honoured up to this, within the deadline
RATE_LIMITED_TRIES = 3             # requests to a service that answers 429, then it waits a pass


def _opener():
    import ssl
    import urllib.request

    class NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, req, fp, code, msg, headers, newurl):
            return None

    context = ssl.create_default_context()
    return urllib.request.build_opener(urllib.request.ProxyHandler(), NoRedirect(),
                                       urllib.request.HTTPSHandler(context=context))


def send_http(request, deadline, opener=None):
    """(status, headers, body bytes) of one request; raises OSError/URLError on transport
    failure. The socket timeout is what is left of the deadline."""
    import urllib.error
    import urllib.request
    left = deadline - time.monotonic()
    if left <= 0:
        raise OSError(errno.ETIMEDOUT, "no time left before the delivery deadline")
    req = urllib.request.Request(request.url, data=request.body, method=request.method,
                                 headers=dict(request.headers, **{"User-Agent": "gpualert/" + __version__}))
    try:
        resp = (opener or _opener()).open(req, timeout=left)
    except urllib.error.HTTPError as exc:
        body = _read_bounded(exc)
        return exc.code, exc.headers, body
    with resp:
        return resp.status if hasattr(resp, "status") else resp.getcode(), resp.headers, _read_bounded(resp)


def _read_bounded(resp):
    try:
        return resp.read(CHANNEL_BODY_MAX_BYTES) or b""
    except Exception:
        return b""


def classify_http(status, body):
    """A service's answer -> SendResult (detail not yet masked).
    4xx other than 408/429 is permanent: sending again cannot help."""
    text = _clean(_text(body), 200)
    if 200 <= status < 300:
        return SendResult(ok=True, detail="HTTP %d" % status)
    permanent = 400 <= status < 500 and status not in (408, 429) or 300 <= status < 400
    return SendResult(ok=False, permanent=permanent,
                      detail="HTTP %d%s" % (status, (": " + text) if text else ""))


def retry_after_s(headers, now=None):
    """Seconds a 429 asks to wait (Retry-After: seconds or an HTTP date); None if unsaid."""
    value = (headers or {}).get("Retry-After") if headers is not None else None
    if not value:
        return None
    value = str(value).strip()
    if re.match(r"^\d+(\.\d+)?$", value):
        return float(value)
    try:
        from email.utils import parsedate_to_datetime
        when = parsedate_to_datetime(value).timestamp()
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    return max(0.0, when - (now or time.time()))


def post_channel(channel, summary, deadline, *, record=None, txn_id=None, opener=None, picture=None):
    """Deliver one channel's message before the monotonic deadline; then, where the service
    takes files, the picture of the run (best effort: its failure is only noted). Never
    raises; the detail line names the channel with its secrets masked."""
    try:
        if channel.service == "apprise":
            res = _post_apprise(channel, summary, deadline)
        elif channel.service == "matrix":
            res = _post_matrix(channel, summary, deadline, txn_id or _txn_id(summary), opener)
        else:
            res = _post_with_retry(build_channel_request(channel, summary, record), deadline, opener)
        if res.ok and picture and channel.service in PICTURE_SERVICES:
            res = res._replace(detail=res.detail + "; picture: " + _post_picture(
                channel, summary, picture, deadline, (txn_id or _txn_id(summary)) + "-png", opener=opener))
    except Exception as exc:  # noqa: BLE001 - a channel never breaks the run
        res = SendResult(ok=False, detail=_transport_reason(exc))
    return res._replace(detail=mask_text("%s %s: %s" % (channel.service, channel.masked, res.detail),
                                         channel.secrets))


def _post_picture(channel, summary, png, deadline, txn_id, *, opener=None):
    """One line on how the picture went; never raises (the message itself is delivered)."""
    try:
        if channel.service == "matrix":
            res = _post_matrix_picture(channel, png, deadline, txn_id, opener)
        else:
            res = _post_with_retry(build_picture_request(channel, summary, png), deadline, opener)
    except Exception as exc:  # noqa: BLE001
        res = SendResult(ok=False, detail=_transport_reason(exc))
    return "sent" if res.ok else "not sent (%s)" % res.detail


def _post_matrix_picture(channel, png, deadline, txn_id, opener=None):
    """Upload to the media repository, then an m.image event that points at it."""
    parts = channel.parts
    auth = {"Authorization": "Bearer " + parts["token"]}
    upload = HttpRequest("POST", "%s/_matrix/media/v3/upload?filename=%s" % (parts["base"], PICTURE_NAME),
                         dict(auth, **{"Content-Type": "image/png"}), png)
    status, _, body = send_http(upload, deadline, opener)
    uri = _json_field(body, "content_uri") if status == 200 else None
    if not uri:
        return classify_http(status, body)._replace(ok=False)
    room, failed = _matrix_room_id(channel, deadline, opener)
    if failed:
        return failed
    content = {"msgtype": "m.image", "body": PICTURE_NAME, "url": uri,
               "info": {"mimetype": "image/png", "size": len(png)}}
    url = "%s/_matrix/client/v3/rooms/%s/send/m.room.message/%s" % (
        parts["base"], _quote(room), _quote(txn_id))
    return _post_with_retry(_json_request(url, content, auth)._replace(method="PUT"), deadline, opener)


def _post_with_retry(request, deadline, opener=None):
    """POST; on 429 wait as asked (Retry-After, or 1 s) when that fits before the deadline,
    RATE_LIMITED_TRIES times at most. A service still rate-limiting counts as down for now:
    resend leaves its other posts for the next pass instead of asking again for each."""
    for tries in range(1, RATE_LIMITED_TRIES + 1):
        try:
            status, headers, body = send_http(request, deadline, opener)
        except (UnicodeError, ValueError) as exc:  # a header or host that cannot be sent, ever
            return SendResult(ok=False, permanent=True,
                              detail="cannot be sent as it is: %s" % _describe(exc))
        except Exception as exc:  # noqa: BLE001 - no answer: the service is out of reach now
            return SendResult(ok=False, detail=_transport_reason(exc), transport_down=True)
        res = classify_http(status, body)
        if status != 429:
            return res
        wait = retry_after_s(headers)
        wait = 1.0 if wait is None else wait
        if wait > RETRY_AFTER_MAX_S or time.monotonic() + wait + 0.5 >= deadline:
            return res._replace(detail="%s (Retry-After %gs does not fit the deadline)" % (res.detail, wait),
                                transport_down=True)
        if tries < RATE_LIMITED_TRIES:
            time.sleep(wait)
    return res._replace(detail="%s (still rate-limited after %d tries)" % (res.detail, tries),
                        transport_down=True)


def _transport_reason(exc):
    import socket
    import ssl
    import urllib.error
    reason = getattr(exc, "reason", exc) if isinstance(exc, urllib.error.URLError) else exc
    if isinstance(reason, ssl.SSLCertVerificationError if hasattr(ssl, "SSLCertVerificationError")
                  else ssl.CertificateError):
        return "TLS certificate not trusted: %s" % _describe(reason)
    if isinstance(reason, ssl.SSLError):
        return "TLS failed: %s" % _describe(reason)
    if isinstance(reason, socket.timeout) or "timed out" in str(reason).lower():
        return "timed out (delivery deadline)"
    if isinstance(reason, ConnectionRefusedError):
        return "connection refused"
    if isinstance(reason, socket.gaierror):
        return "cannot resolve the host: %s" % _describe(reason)
    return _describe(reason)


def _txn_id(summary):
    import hashlib
    digest = hashlib.sha1(("%s|%s" % (summary.title, summary.text)).encode("utf-8")).hexdigest()
    return "gpualert-%s-%s" % (digest[:16], os.urandom(4).hex())


def _post_matrix(channel, summary, deadline, txn_id, opener=None):
    """Resolve a #alias to a room id, then PUT the event; join once if not yet a member."""
    room, failed = _matrix_room_id(channel, deadline, opener)
    if failed:
        return failed
    request = build_matrix(channel, summary, room, txn_id)
    res = _post_with_retry(request, deadline, opener)
    if not res.ok and "M_FORBIDDEN" in res.detail:
        auth = {"Authorization": "Bearer " + channel.parts["token"]}
        join = "%s/_matrix/client/v3/join/%s" % (channel.parts["base"], _quote(room))
        status, _, body = send_http(_json_request(join, {}, auth), deadline, opener)
        if status == 200:
            res = _post_with_retry(request, deadline, opener)
    return res


def _matrix_room_id(channel, deadline, opener=None):
    """(room id, None) or (None, SendResult why not): an alias is looked up in the
    directory; one without ':server' takes the server of the token's own user."""
    parts = channel.parts
    auth = {"Authorization": "Bearer " + parts["token"]}
    room = parts["room"]
    if room.startswith("#") and ":" not in room:  # the server name is the user's, not the host's
        whoami = "%s/_matrix/client/v3/account/whoami" % parts["base"]
        status, _, body = send_http(HttpRequest("GET", whoami, auth, None), deadline, opener)
        user_id = _json_field(body, "user_id") if status == 200 else None
        if not user_id or ":" not in user_id:
            res = classify_http(status, body)
            return None, res._replace(ok=False, detail="whoami (for the alias's server): %s" % res.detail)
        room += ":" + user_id.split(":", 1)[1]
    if not room.startswith("#"):
        return room, None
    url = "%s/_matrix/client/v3/directory/room/%s" % (parts["base"], _quote(room))
    status, _, body = send_http(HttpRequest("GET", url, auth, None), deadline, opener)
    if status != 200:
        res = classify_http(status, body)
        return None, res._replace(detail="room alias %s: %s" % (room, res.detail))
    room_id = _json_field(body, "room_id")
    if not room_id:
        return None, SendResult(ok=False, detail="room alias %s: no room_id in the answer" % room)
    return room_id, None


def _json_field(body, name):
    import json
    try:
        return json.loads(_text(body)).get(name)
    except (ValueError, AttributeError):
        return None


def _post_apprise(channel, summary, deadline):
    """The bridge for schemes gpualert does not speak: `apprise -c FILE` with the URL in a
    private config file and the title and body (the job's lines) on its stdin, so none of
    them shows in `ps` to other users. Without apprise here the post stays for a `resend`
    where it is installed (a login node)."""
    import shutil
    import tempfile
    path = shutil.which("apprise")
    if not path:
        return SendResult(ok=False, detail="unknown scheme and `apprise` is not installed here "
                                           "(pip install --user apprise, or use a native URL); "
                                           "kept for a resend where it is")
    folder = tempfile.mkdtemp(prefix="gpualert-apprise-")  # 0700
    conf = os.path.join(folder, "urls.txt")
    try:
        fd = os.open(conf, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as handle:
            handle.write(channel.url + "\n")
        body = "%s\n%s" % (summary.title, summary.text)  # apprise reads a body, not a title, from stdin
        return _run_apprise([path, "-c", conf], deadline, body.encode("utf-8", "replace"))
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _run_apprise(argv, deadline, body):
    import subprocess
    try:
        proc = start_helper(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    except OSError as exc:
        return SendResult(ok=False, detail="cannot run apprise: %s" % (exc.strerror or exc))
    try:
        out, _ = proc.communicate(body, timeout=max(0.1, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        _kill_session(proc)
        return SendResult(ok=False, detail="apprise timed out (delivery deadline)")
    if proc.returncode == 0:
        return SendResult(ok=True, detail="handed to apprise")
    last = _clean(_text(out).strip().splitlines()[-1] if out.strip() else "", 200)
    return SendResult(ok=False, detail="apprise exited with status %d%s" % (
        proc.returncode, (": " + last) if last else ""))


def deliver_channels(channels, summary, deadline, *, record=None, opener=None, txn_ids=None,
                     picture=None):
    """Post to every channel at once, each in a daemon thread; what has not answered by the
    deadline counts as failed (not permanent). Returns [(channel, SendResult)] in order."""
    import threading
    results = [None] * len(channels)
    txn_ids = txn_ids or [None] * len(channels)

    def work(i, channel):
        results[i] = post_channel(channel, summary, deadline, record=record, txn_id=txn_ids[i],
                                  opener=opener, picture=picture)

    threads = []
    for i, channel in enumerate(channels):
        thread = threading.Thread(target=work, args=(i, channel), name="gpualert-channel")
        thread.daemon = True
        thread.start()
        threads.append(thread)
    for thread in threads:
        thread.join(max(0.0, deadline - time.monotonic()))
    return [(ch, res if res is not None else SendResult(  # accepted, never answered: down now
        ok=False, detail="%s %s: no answer before the delivery deadline" % (ch.service, ch.masked),
        transport_down=True)) for ch, res in zip(channels, results)]


# ==== Edges: delivery and resend ====

def deliver(msg, cfg, deadline=None, on_spooled=None, spool=True, *, over=None):
    """Spool msg, then send it with the configured transport (spool first: a SIGKILL at any
    moment leaves it accepted or in the outbox, never neither).

    Returns {"outcome": "sent"|"outbox"|"dead"|"dry-run"|"failed", "transport": str,
    "detail": str, "outbox_path": str or None}. Sending stops after cfg smtp_timeout, or at
    `deadline` (a time.monotonic() value) if that is sooner, but gets half a second at least.
    on_spooled(path) is called once the message is safe on disk (path None: nowhere took it).
    spool=False (test-email): nothing is saved; a failure is only reported ("failed").
    over: a spooled item this process holds claimed (the run's provisional stand-in) that the
    message replaces in one step (spool_over). Never raises.
    """
    state = {"path": None}
    try:
        return _deliver(msg, cfg, deadline, state, on_spooled=on_spooled if spool else None,
                        spool=spool, over=over)
    except BaseException as exc:  # never let mail change the job's fate, not even Ctrl-C
        if state["path"] or not spool:
            path = _safely(lambda: release_item(state["path"]), state["path"]) if state["path"] else None
            return _outcome("outbox" if spool else "failed", "none", "internal error: %s"
                            % _describe(exc), path)
        return _outbox_result(msg, cfg, "internal error: %s" % _describe(exc), "none")


def _deliver(msg, cfg, deadline, state, *, on_spooled, spool, over=None):
    data = msg if isinstance(msg, bytes) else _wire_bytes(msg)
    if cfg.get("dry_run"):
        path = _save_anywhere(data, _dry_run_dirs(cfg, data), "dry run")[0]
        return _outcome("dry-run", "none", "dry run: not sent; message saved to %s" % path, path)
    errors = []
    if spool:  # spooled claimed: another process's flush must not take it meanwhile
        state["path"], errors = spool_message(data, cfg, "spooled before the first attempt",
                                              claimed=True, over=over)
        if on_spooled:
            on_spooled(state["path"])
    path = state["path"]
    kind, where = _choose_transport(cfg)
    if kind in ("outbox", "missing"):
        path = release_item(path) if path else None
        return _unsent(msg, data, cfg, where, "outbox" if kind == "outbox" else "sendmail",
                       path=path, errors=errors, spool=spool)
    now = time.monotonic()
    deadline = max(now + 0.5, min(now + _mail_timeout(cfg), deadline or float("inf")))
    if path is None:  # nowhere to spool it: send anyway; _unsent dumps it if that fails
        res = _send_with_slim_retry(msg, data, cfg, (kind, where), deadline)
        if res.ok:
            return _outcome("sent", kind, res.detail)
        return _unsent(msg, data, cfg, res.detail, kind, path=None, errors=errors, spool=spool)
    result, res, where_now = send_claimed(path, data, msg, cfg, transport=(kind, where),
                                          deadline=deadline)
    if result == "sent":
        return _outcome("sent", kind, res.detail + (_local_mail_note(cfg) if kind == "sendmail" else ""))
    if result == "dead":
        return _outcome("dead", kind, "refused for good (%s); kept in %s" % (res.detail, where_now),
                        where_now)
    return _outcome("outbox", kind, _outbox_detail(res.detail, where_now, errors), where_now)


def _unsent(msg, data, cfg, reason, transport, *, path, errors, spool):
    if not spool:
        return _outcome("failed", transport, "not sent (%s); nothing was saved" % reason)
    if path:
        return _outcome("outbox", transport, _outbox_detail(reason, path, errors), path)
    _emergency_dump(data, msg)
    return _outcome("outbox", transport, "not sent (%s) and could not be saved (%s); "
                    "the message was written to stderr" % (reason, "; ".join(errors)))

def _outbox_result(msg, cfg, reason, transport, over=None):
    """Spool msg (it was not, or could not be, sent now) -> the delivery record.
    over: as for spool_message."""
    try:
        data = msg if isinstance(msg, bytes) else _wire_bytes(msg)
        path, errors = spool_message(data, cfg, reason, over=over)
    except BaseException as exc:
        data, path, errors = None, None, [_describe(exc)]
    if path:
        return _outcome("outbox", transport, _outbox_detail(reason, path, errors), path)
    _emergency_dump(data, msg)
    return _outcome("outbox", transport, "not sent (%s) and could not be saved (%s); "
                    "the message was written to stderr" % (reason, "; ".join(errors)))


def send_claimed(claimed, data, msg, cfg, *, transport, deadline):
    """Send a claimed message and settle it. -> (state, SendResult, path): state "sent",
    "dead" (refused for good: buried, told once on stderr) or "waiting" (released).
    The claim is renewed while it is sent: a slow relay does not make it look abandoned."""
    kept = []

    def accepted(sent, refused):  # before the item leaves the spool: refused ones stay in
        kept.extend(keep_refused(claimed, sent, refused, cfg))
        finish_item(claimed)
    with Renewing(claimed):
        res = _send_with_slim_retry(msg, data, cfg, transport, deadline, on_accepted=accepted)
    if res.ok:
        if res.refused and not kept:  # a transport without the callback (none refuses now)
            kept = keep_refused(claimed, data, res.refused, cfg)
        finish_item(claimed)
        return "sent", res._replace(detail="; ".join([res.detail] + kept)), None
    if res.permanent:
        path, why = bury_or_keep(claimed, res.detail)
        if why:
            return "waiting", res._replace(detail=why), path
        _warn("warning: a message was refused for good (%s); it is kept in %s and will not "
              "be tried again" % (res.detail, path))
        return "dead", res, path
    if res.refused:  # none accepted it: those refused for good go to dead/, the item waits
        split = _split_refused(claimed, data, res.refused, cfg)
        res = res._replace(detail="; ".join([res.detail] + split))
    return "waiting", res, release_item(claimed)


def _split_refused(claimed, data, refused, cfg):
    """Every recipient refused, some for now and some for good: a copy for the latter goes
    to dead/ (keep_refused), and the claimed item is readdressed to the former alone."""
    never = dict((a, r) for a, r in refused.items() if r[0] >= 500)
    lines = keep_refused(claimed, data, never, cfg)
    later = [a for a, r in refused.items() if r[0] < 500]
    try:
        spool_over(claimed, _stamp(_readdressed(data, later), "refused for now by the relay: %s"
                                   % _refusals(dict((a, refused[a]) for a in later))))
    except OSError as exc:
        lines.append("not readdressed to %s: %s" % (", ".join(later), _describe(exc)))
    return lines


def keep_refused(claimed, data, refused, cfg):
    """The recipients the relay refused while it took the message for the others: refused
    for now (4xx), a copy for them alone waits in the spool for resend; for good (5xx), a
    copy for them goes to dead/ with the reason (told on stderr now and in the next
    message). The recipients that accepted never get it again. -> lines saying which."""
    later = dict((a, r) for a, r in (refused or {}).items() if r[0] < 500)
    never = dict((a, r) for a, r in (refused or {}).items() if r[0] >= 500)
    lines = []
    if later:
        why = "refused for now by the relay: %s" % _refusals(later)
        path, errors = spool_item(_stamp(_readdressed(data, later), why), "eml", cfg,
                                  places=[os.path.dirname(claimed)] + spool_places(cfg))
        lines.append("%s; %s" % (why, ("kept for resend in %s" % path) if path
                                 else "could not be kept: %s" % "; ".join(errors)))
    if never:
        why = "refused for good by the relay: %s" % _refusals(never)
        try:
            dead = private_dir(os.path.join(os.path.dirname(claimed), DEAD_DIR))
            line = ("X-Gpualert-Dead-Reason: %s\n" % _clean(why, 500)).encode("utf-8", "replace")
            path = _write_private(dead, _item_name("eml"), line + _readdressed(data, never))
            lines.append("%s; kept in %s, not tried again" % (why, path))
        except OSError as exc:
            lines.append("%s; not kept: %s" % (why, _describe(exc)))
        _warn("warning: %s" % lines[-1])
    return lines


class MailResend(object):
    """What resend does with a spooled e-mail: every one goes by the one configured transport
    (so a transport found down stops them all), a stand-in its run's full message replaced
    is dropped, and the relay's partial refusals are split (send_claimed)."""
    kind, limiter_key = "eml", "messages"

    def __init__(self, cfg):
        self.cfg = cfg
        self.transport = _choose_transport(cfg)

    def unusable(self):
        return self.transport[1] if self.transport[0] in ("outbox", "missing") else None

    @staticmethod
    def held(path):
        return _was_held(path)

    @staticmethod
    def message_of(claimed):
        """What the hourly cap counts as one message: each e-mail. -> (it, its channel)."""
        return claimed, None

    @staticmethod
    def not_to_send(claimed, places, down):
        """A claimed item this pass settles without sending it (so it takes no place under
        the hourly cap) -> (what to count, the line to tell or None), or None to send it."""
        if drop_superseded(claimed, list(places)):  # only once claimed: no one sends it meanwhile
            name = _claim_parts(os.path.basename(claimed))[0]
            return (), "%s: a stand-in its run's full message replaces; dropped" % name
        return None  # a mail transport found down stops the pass before the next item

    def send(self, claimed, stop_at):
        """-> (what to count: ("sent",), ("failed",), ("dead",)...; a line to tell, or None;
        the transport found down: this kind's (all its items), a channel's URL, or None)."""
        name = _claim_parts(os.path.basename(claimed))[0]
        try:
            with open(claimed, "rb") as f:
                data = f.read()
        except OSError as exc:
            release_item(claimed)
            return ("failed",), "%s: %s" % (name, _describe(exc)), None
        if data.startswith(b"X-Gpualert-Outbox-Reason:"):  # the spool's own note, not the message's
            data = data.split(b"\n", 1)[-1]
        deadline = min(stop_at, time.monotonic() + _mail_timeout(self.cfg))
        state, res, _ = send_claimed(claimed, data, data, self.cfg, transport=self.transport,
                                     deadline=deadline)
        counted = ("failed",) if state == "waiting" else (state,)
        if state != "dead" and any(code >= 500 for code, _ in (res.refused or {}).values()):
            counted += ("dead",)  # a copy for the recipients refused for good went to dead/
        return (counted, None if state == "sent" else "%s: %s" % (name, res.detail),
                self.kind if res.transport_down else None)


class ChannelResend(object):
    """What resend does with a spooled chat post: each goes to its own channel (one found
    down is skipped for the rest of the pass, the others go on); a record that cannot be
    read as one is a dead letter."""
    kind, limiter_key = CHANNEL_KIND, "channels"

    def __init__(self, cfg):
        self.cfg = cfg
        self.last = (None, None)  # (claimed path, its record): each item is read once

    def record(self, claimed):
        if self.last[0] != claimed:
            self.last = (claimed, read_channel_record(claimed))
        return self.last[1]

    @staticmethod
    def unusable():
        return None

    @staticmethod
    def held(path):
        return _record_held(path)

    def message_of(self, claimed):
        """One message to several channels takes one slot of the cap, as it does in a run.
        -> (the message, the channel)."""
        data = self.record(claimed)  # not_to_send has read it: readable and whole
        return repr(sorted(data["summary"].items())), data["url"]

    def not_to_send(self, claimed, places, down):  # as MailResend.not_to_send
        name = _claim_parts(os.path.basename(claimed))[0]
        try:
            channel = _channel_from_record(self.record(claimed))[0]
        except OSError as exc:  # unreadable now (permissions, a full disk): maybe not later
            release_item(claimed)
            return ("failed",), "%s: %s" % (name, _describe(exc))
        except (ValueError, KeyError, TypeError, AttributeError, ConfigError) as exc:
            state, detail = _dead_letter(claimed, "unusable record: %s" % _describe(exc))
            return (state,), detail  # sending again cannot help
        if channel.url in down:  # found down in this pass: left for the next
            release_item(claimed)
            return (), None
        return None

    def send(self, claimed, stop_at):  # as MailResend.send; not_to_send read the record
        data = self.record(claimed)
        channel, summary = _channel_from_record(data)
        deadline = min(stop_at, time.monotonic() + _mail_timeout(self.cfg))
        # In a thread, like a run's posts: a server that drips its answer cannot hold resend.
        [(_, res)] = deliver_channels([channel], summary, deadline, record=data.get("record"),
                                      txn_ids=[data.get("txn_id")])
        state, detail = _settle_record(claimed, res)
        return (state,), detail, channel.url if res.transport_down else None  # (masked: one per scheme)


def resend(cfg, kinds=(MailResend, ChannelResend), *, max_s=None, skip_held=False,
           max_items=RESEND_MAX_ITEMS, capped=True):
    """Send what waits in every place of the spool (search_places), oldest first, e-mail then
    chat, each item claimed first so no other process sends it too. One policy for every
    kind: at most max_s seconds in all (default: RESEND_MAX_S, or four mail timeouts if
    longer), shared equally by the kinds with items waiting (what one leaves goes to the
    next), and max_items tries of each kind; the hourly cap (capped), counted per kind as a
    run counts it; items held back on purpose (the cap, a broken config) left to `resend`
    (skip_held: a run's flush); a transport found down is not tried again in this pass.
    -> {"found": [(place, n)], "details": [str], "outbox": dir, and per kind ("eml",
    "json") a tally: {"sent", "failed", "dead", "remaining", "held"}}."""
    places, refused = search_places(cfg)
    report = {"outbox": _outbox_dir(cfg), "found": collections.OrderedDict(),
              "details": ["ignored %s" % line for line in refused]
              + [line for place in places for line in adopt_orphans(place)]}
    stop_at = time.monotonic() + (max_s if max_s is not None
                                  else max(RESEND_MAX_S, 4 * _mail_timeout(cfg)))
    down = set()  # the transports found down (the mail relay, a chat URL)
    resenders = [make(cfg) for make in kinds]
    for i, resender in enumerate(resenders):
        found = [(place, ready_items(place, kinds=(resender.kind,))) for place in places]
        for place, paths in [(place, paths) for place, paths in found if paths]:
            report["found"][place] = report["found"].get(place, 0) + len(paths)  # all kinds
        items = [path for _, paths in found for path in paths
                 if not (skip_held and resender.held(path))]
        tally = report[resender.kind] = {"sent": 0, "failed": 0, "dead": 0}
        why = resender.unusable() if items else None
        waiting = [r for r in resenders[i + 1:] if any(ready_items(p, kinds=(r.kind,)) for p in places)]
        now = time.monotonic()  # an equal share of the time left: slow mail cannot starve chat
        share = now + (stop_at - now) / (1 + len(waiting))
        why = why or _resend_items(items, resender, tally, report["details"],
                                   limits=(share, max_items, capped, down, places))
        if why:
            report["details"].append(why)
        tally["remaining"] = sum(len(ready_items(place, kinds=(resender.kind,))) for place in places)
        tally["held"] = sum(len(_held_claims(place, resender.kind)) for place in places)
    return report


def _resend_items(items, resender, tally, details, *, limits):
    """The one resend loop: claim, send, count. -> why it stopped early, or None."""
    stop_at, max_items, capped, down, places = limits
    cfg = resender.cfg
    limiter = _limiter(cfg, resender.limiter_key) if capped else None
    channels_of = {}  # message -> the channels it went to in this pass (one cap slot each time)
    for n, path in enumerate(items):
        if time.monotonic() >= stop_at or n >= max_items:
            return "stopped: the time or count limit of one resend"
        try:
            claimed = claim_item(path)
        except OSError as exc:
            tally["failed"] += 1
            details.append("%s: cannot claim it (%s); left as it is" % (path, _describe(exc)))
            continue
        if claimed is None:
            continue  # another process is sending it
        unsent = resender.not_to_send(claimed, places, down)
        if unsent is not None:  # not tried, so not counted against the cap
            for state in unsent[0]:
                tally[state] += 1
            if unsent[1]:
                details.append(unsent[1])
            continue
        message, channel = resender.message_of(claimed)
        new = message not in channels_of or channel in channels_of[message]  # a second copy: anew
        if new and limiter is not None and not limiter.allow():
            release_item(claimed)
            return "stopped: more than %d messages this hour (--max-per-hour; 0 lifts it)" \
                % cfg["max_per_hour"]
        channels_of[message] = set([channel]) if new else channels_of[message] | set([channel])
        counted, detail, went_down = resender.send(claimed, stop_at)
        for state in counted:
            tally[state] += 1
        if detail:
            details.append(detail)
        if went_down == resender.kind:  # the one transport of every item of this kind
            return "stopped: the transport is not usable now"
        if went_down:
            down.add(went_down)
    return None


# ==== Edges: scheduler queries ====

# ---- running commands ----

def run_command(argv, timeout=CMD_TIMEOUT_S):
    """Run argv with a time bound; (returncode, stdout text), or None if it could not run
    or did not finish in time (then its whole session is killed)."""
    return _run_command_bounded(argv, timeout, merge_stderr=False)


def run_command_with_errors(argv, timeout=CMD_TIMEOUT_S, env=None):
    """run_command, with stderr in the text: where the words tell "no such job" from "the
    controller is down" (both exit 1). env: the command's environment (default: ours)."""
    return _run_command_bounded(argv, timeout, merge_stderr=True, env=env)


def _run_command_bounded(argv, timeout, merge_stderr, env=None):
    import subprocess
    try:
        proc = start_helper(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT if merge_stderr else subprocess.DEVNULL,
                            close_fds=True, env=env)
    except (OSError, ValueError):
        return None
    LIVE_HELPERS.add(proc)
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill_session(proc)
        return None
    finally:
        LIVE_HELPERS.discard(proc)
    return proc.returncode, out.decode("utf-8", "replace")


def _ask(run, argv, timeout, notes):
    """run(argv) -> its stdout; "" when it answered with an error (unknown job, accounting
    disabled); None when it did not answer (missing, hung, broken seam). Notes say why."""
    try:
        got = run(argv, timeout)
    except Exception as exc:  # a seam must not break the caller
        notes.append("%s: %s" % (argv[0], exc))
        return None
    if got is None:
        notes.append("%s did not answer within %gs (or is missing)" % (argv[0], timeout))
        return None
    rc, out = got
    if rc != 0:
        notes.append("%s exited %s" % (" ".join(argv[:3]), rc))
        return ""
    return out


def _first_said_line(text):
    return (text.strip().splitlines() or [""])[0].strip()


# ---- one adapter per scheduler ----

def _sge_info(job_id, state, done, sub, task=None):
    info = {"job_id": str(job_id), "label": "%s.%s" % (job_id, task) if task else str(job_id),
            "kind": "sge", "state": state, "done": done, "reason": None, "exit_code": None,
            "signal": None, "source": "qstat", "name": sub.get("job_name"),
            "stdout": sge_output_path(sub.get("stdout_path_list"), sub, task, "o") if sub else None,
            "stderr": sge_output_path(sub.get("stderr_path_list"), sub, task, "e") if sub else None,
            "end_time": None, "start_time": None, "facts": {"scheduler_state": state},
            "command": sub.get("script_file")}
    if sub.get("merge", "").lower() in ("y", "yes", "true"):
        info["stderr"] = info["stdout"]
    return info


def job_info_from_qacct(rec, submitted=None):
    """The job-info dict of one finished SGE job (or task) from its qacct record, with the
    output paths from its submission record (qstat -j, kept while it was queued)."""
    task = rec.get("taskid") if rec.get("taskid") not in (None, "", "undefined") else None
    facts = sge_facts(rec)
    info = _sge_info(rec.get("jobnumber"), facts["scheduler_state"], True, submitted or {}, task)
    info.update(source="qacct", name=rec.get("jobname") or info["name"],
                exit_code=facts.get("exit_code"), facts=facts,
                start_time=_sge_time(rec.get("start_time")), end_time=_sge_time(rec.get("end_time")))
    if not submitted:
        info["note"] = "the job's output files are unknown: it had ended before watch saw it queued"
    return info


#: The fields every adapter's recognise() gives, in this order (those known).
JOB_FIELDS = ("job_id", "array_job_id", "array_task_id", "array_task_count", "job_name",
              "partition", "nodelist", "submit_dir", "account")


class Scheduler(object):
    """One batch system behind one interface; adding a scheduler is one subclass here and
    its place in SCHEDULERS. This base is also "no scheduler": it knows nothing, asks nothing.
    In a job: recognise(environ) -> the job's fields (None outside its jobs); at the start
    read_limit(info, ...) fills read_time_limit's info and kill_wait() gives the seconds from
    its SIGTERM to its SIGKILL; end_askers() are query_end_reason's sources, in order, each
    (sched, run, notes) -> (reason, evidence), by default why_ended alone; the signals in `notices` warn of the end and
    say why by themselves (why_signalled); restarts(), node() and plan_requeue() serve
    --requeue (plan_requeue fills req and returns what to run last, or None). For `watch`:
    poll() and says_unknown() (None: watch cannot follow its jobs), here(): installed?"""
    kind, tool, kill_wait_s, name = "", None, KILL_WAIT_UNKNOWN_S, "scheduler"
    submit_tool = "sbatch"  # watch's stand-in command when no script is known
    state_note, evidence_note = "job %s", False  # watch's note on the state; the evidence too?
    notices, variables = (), ()  # variables: per JOB_FIELDS, "A B" (A, else B) or "" (none)
    why_ended = poll = says_unknown = None

    def recognise(self, environ):
        fields = [(key, _env(environ, *names.split())) for key, names in zip(JOB_FIELDS, self.variables)]
        return dict([("kind", self.kind)] + fields) if fields and fields[0][1] else None

    def read_limit(self, info, sched, run, environ):
        pass

    def kill_wait(self, sched, run):
        return self.kill_wait_s

    def end_askers(self):
        return (self.why_ended,) if self.why_ended else ()

    def restarts(self, environ):
        return "0"

    restarts_exact = True  # restarts() is the count (Slurm's); SGE only says "restarted"

    def node(self, sched, environ):
        return None  # the host name

    def here(self, which, run=None, environ=None):
        return bool(self.tool and which(self.tool))

    def plan_requeue(self, req, sched, dry, folder):
        return None

    def limit_reached(self, rec):
        return False  # what the scheduler's job record `rec` says of the time limit

    def node_fault(self, node, since=None):
        return None  # the scheduler's word that `node` went out of order since `since`, or None

    def unconfirmed(self, req, rec):
        """Why a walltime or hardware requeue is not made, or None. A line in the log is no
        proof (a requeued job appends its previous output, jobs print example logs), so the
        time limit must be the scheduler's word (its record, or its answer to the SIGTERM:
        req["said"]) and a hardware fault must show where the job cannot print: nvidia-smi's
        counters or a GPU that stopped answering (req["gpu_fault"]), or the node's state."""
        if req["cause"] == "walltime" and req.get("said") != "walltime" and not self.limit_reached(rec):
            return ("not requeued: only the job's own output says so; %s does not confirm a "
                    "time limit" % self.name)
        if req["cause"] != "hardware" or req.get("gpu_fault"):
            return None
        req["gpu_fault"] = self.node_fault(req.get("node"), req.get("start"))
        return None if req["gpu_fault"] else (
            "not requeued: only the job's own output says so; neither nvidia-smi nor %s shows "
            "a fault" % self.name)


class Slurm(Scheduler):
    kind, tool, kill_wait_s, name, state_note = "slurm", "scontrol", 30.0, "Slurm", "Slurm state %s"
    variables = ("SLURM_JOB_ID SLURM_JOBID", "SLURM_ARRAY_JOB_ID", "SLURM_ARRAY_TASK_ID",
                 "SLURM_ARRAY_TASK_COUNT", "SLURM_JOB_NAME", "SLURM_JOB_PARTITION",
                 "SLURM_JOB_NODELIST SLURM_NODELIST", "SLURM_SUBMIT_DIR", "SLURM_JOB_ACCOUNT")

    def recognise(self, environ):
        sched, end = super(Slurm, self).recognise(environ), _env(environ, "SLURM_JOB_END_TIME")
        return sched and dict(sched, end_time=float(end) if end and end.isdigit() else None,
                              cluster=_env(environ, "SLURM_CLUSTER_NAME"))

    def read_limit(self, info, sched, run, environ):
        """SLURM_JOB_END_TIME, else `scontrol show job -o ID` (TimeLimit, EndTime)."""
        end = sched.get("end_time") or _env(environ, "SLURM_JOB_END_TIME")
        if end and str(end).replace(".", "", 1).isdigit():
            info.update(end_time=float(end), source="SLURM_JOB_END_TIME")
        rec = self.record(_query_id(sched), run, info["notes"])
        if rec:
            info["limit_s"] = parse_slurm_duration(rec.get("TimeLimit"))
            info["unlimited"] = rec.get("TimeLimit") in ("UNLIMITED", "INFINITE") or None
            if info["end_time"] is None and rec.get("JobState") in ("RUNNING", "CONFIGURING"):
                info["end_time"] = parse_slurm_time(rec.get("EndTime"))
            info["source"] = info["source"] or "scontrol"

    def kill_wait(self, sched, run):
        answer = run(["scontrol", "show", "config"], CMD_TIMEOUT_S)
        found = answer and re.search(r"^KillWait\s*=\s*(\d+)", answer[1], re.M)
        return float(found.group(1)) if found else KILL_WAIT_UNKNOWN_S  # not the 30 s default

    def end_askers(self):
        return self.why_ended, self._ask_squeue, self._ask_sacct

    def why_ended(self, sched, run, notes):
        rec = self.record(_query_id(sched), run, notes)
        return slurm_record_reason(rec) if rec else (None, None)

    def _ask_squeue(self, sched, run, notes):
        argv = ["squeue", "-h", "-t", "all", "-o", "%T|%r", "-j", _query_id(sched)]
        line = (_ask(run, argv, CMD_TIMEOUT_S, notes) or "").strip().splitlines()[:1]
        if not line or "|" not in line[0]:
            return None, None
        state, why = line[0].split("|", 1)
        evidence = "squeue: %s (%s)" % (state, why)
        if state in SLURM_STATE_REASONS:
            return SLURM_STATE_REASONS[state], evidence
        return ("walltime", evidence) if why == "TimeLimit" else (None, None)

    def _sacct(self, job_id, run, notes):
        argv = ["sacct", "-n", "-P", "-X", "-j", str(job_id), "-o", "JobID,State,ExitCode"]
        return _ask(run, argv, CMD_TIMEOUT_S, notes)

    def _ask_sacct(self, sched, run, notes):
        for _, state, _ in parse_sacct(self._sacct(_query_id(sched), run, notes)):
            if state in SLURM_STATE_REASONS:
                return SLURM_STATE_REASONS[state], "sacct: %s" % state
        return None, None

    def restarts(self, environ):
        return environ.get("SLURM_RESTART_COUNT") or "0"

    def node(self, sched, environ):
        return environ.get("SLURMD_NODENAME")

    def _show(self, job_id, run, notes):
        return _ask(run, ["scontrol", "show", "job", "-o", str(job_id)], CMD_TIMEOUT_S, notes)

    def record(self, job_id, run=None, notes=None, whole=False):
        """`scontrol show job -o JOBID` as a dict ({} when Slurm does not answer); whole: without
        -o, so that free text (a comment, a job name) is read whole (SCONTROL_FREE_TEXT)."""
        if whole:
            out = _ask(run or run_command, ["scontrol", "show", "job", str(job_id)], CMD_TIMEOUT_S, notes or [])
        else:
            out = self._show(job_id, run or run_command, [] if notes is None else notes)
        recs = parse_scontrol(out)
        return recs[0] if recs else {}

    def poll(self, job_id, run=None, memory=None, notes=None):
        """One look at a Slurm job (see poll_job). Sources in order: scontrol show job -o,
        squeue -t all, sacct."""
        run, notes = run or run_command, [] if notes is None else notes
        out = self._show(job_id, run, notes)
        recs = parse_scontrol(out)
        if recs:
            return [job_info_from_scontrol(r) for r in recs]
        answered = out is not None
        argv = ["squeue", "-h", "-t", "all", "-j", str(job_id), "-o", "%i|%T|%r"]
        out = _ask(run, argv, CMD_TIMEOUT_S, notes)
        rows = [line.split("|") for line in (out or "").splitlines() if line.count("|") == 2]
        if rows:
            return [_job_info(r[0], r[1], None, {"Reason": r[2]}, "squeue") for r in rows]
        answered = answered or out is not None
        out = self._sacct(job_id, run, notes)
        rows = parse_sacct(out)
        if rows:
            return [_job_info(r[0], r[1], r[2], {}, "sacct") for r in rows]
        return [] if answered or out is not None else None

    def says_unknown(self, job_id, run):
        # A broken seam (an exception: None, as for no answer) cannot say the job is unknown.
        got = _safely(lambda: run(["scontrol", "show", "job", "-o", job_id], CMD_TIMEOUT_S), None)
        if not got or got[0] == 0 or "invalid job id" not in got[1].lower():
            return None
        acct = _safely(lambda: run(["sacct", "-n", "-P", "-X", "-j", job_id, "-o", "JobID,State"],
                                   CMD_TIMEOUT_S), None)
        if acct is None or (acct[0] == 0 and acct[1].strip()):
            return None  # sacct did not answer, or it still has the job
        return "scontrol: %s" % _first_said_line(got[1])

    def plan_requeue(self, req, sched, dry, folder):
        """Check with Slurm, then resubmit now (hardware) or leave the requeue for last."""
        job = _query_id(sched)  # an array task: only itself
        rec = self.record(job, whole=True)  # its comment and name are carried to a resubmission
        refusal = slurm_requeue_refusal(rec, req["action"]) or (
            req["cause"] == "preempted" and slurm_preemption_unseen(rec)) or self.unconfirmed(req, rec)
        if refusal:
            return req.update(state="refused", reason=refusal)
        if req["action"] == "requeue":
            # "done" in the message: it is the last thing, and a refusal is told after
            req.update(command="scontrol requeue %s" % job, state="dry-run" if dry else "done")
            return None if dry else lambda: self.requeue(job)
        old = [n for n in hostlist_items(rec.get("ExcNodeList")) if n != "(null)"]
        req["exclude"] = sorted(set(old + req["exclude"] + [req["node"]]))
        chain = req["chain"] + [sched.get("label") or job]
        rec = dict(rec, Signal=self.submit_signal(rec, os.environ))
        if dry:
            return req.update(state="dry-run", command=quote_argv(resubmit_argv(
                rec, "BATCH_SCRIPT", req["exclude"], chain)))
        new_id, command, why = self.resubmit(rec, req["exclude"], chain, folder)
        if new_id:
            return req.update(state="done", new_job=new_id, command="%s  (job %s)" % (command, new_id))
        if why.endswith(UNANSWERED):
            return req.update(state="uncertain", reason="requeue uncertain: %s" % why, command=command)
        return req.update(state="refused", reason="not requeued: %s" % why, command=command)

    def submit_signal(self, rec, environ, run=None):
        """The job's --signal from outside its script (submitted_signal). The submit line:
        scontrol shows it from Slurm 25.11 on, sacct before (where accounting is on)."""
        line = rec.get("SubmitLine")
        if not line:
            got = (run or run_command)(["sacct", "-n", "-P", "-X", "-j", rec.get("JobId", ""),
                                        "-o", "SubmitLine"], CMD_TIMEOUT_S)
            line = got[1] if got and got[0] == 0 else ""
        return submitted_signal(line, rec.get("Command"), environ)

    def limit_reached(self, rec):
        """Slurm says the job reached its time limit: JobState TIMEOUT, Reason=TimeLimit, or
        a RunTime that reached its TimeLimit."""
        limit, ran = parse_slurm_duration(rec.get("TimeLimit")), parse_slurm_duration(rec.get("RunTime"))
        return slurm_record_reason(rec)[0] == "walltime" or bool(limit and ran is not None and ran >= limit)

    def node_fault(self, node, since=None):
        """'Slurm: node gpu17 State=IDLE+DRAIN Reason=...' for a node Slurm drains, marks
        down or failing, else None. Not one drained before the run (`since`): admins drain
        nodes for maintenance, and the run's own line is then still no proof. Slurm stamps
        the reason: 'Reason=Xid 79 [root@2026-12-04T15:04:51]'."""
        recs = parse_scontrol(_ask(run_command, ["scontrol", "show", "node", "-o", node or ""],
                                   CMD_TIMEOUT_S, []), "NodeName") if node else []
        state = recs[0].get("State", "") if recs else ""
        if not re.search(r"DRAIN|DOWN|FAIL", state):
            return None
        stamp = re.search(r"@(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)\]\s*$", recs[0].get("Reason", ""))
        if since and stamp and time.mktime(time.strptime(stamp.group(1), "%Y-%m-%dT%H:%M:%S")) < since - 1:
            return None
        return "Slurm: node %s State=%s Reason=%s" % (node, state, recs[0].get("Reason", ""))

    def requeue(self, job_id, run=None):
        """`scontrol requeue JOBID` -> None when Slurm took it, else ("refused" or "uncertain",
        why). Called last: in the job it requeues, the batch step ends at once. A controller
        too busy to answer may still requeue the job: uncertain, and the budget counts it."""
        got = (run or run_command_with_errors)(["scontrol", "requeue", job_id], CMD_TIMEOUT_S)
        if got is None:
            return "uncertain", "scontrol requeue did not answer within %gs%s" % (CMD_TIMEOUT_S, UNANSWERED)
        return None if got[0] == 0 else ("refused", "Slurm refused: %s" % (
            _first_line(got[1]) or "exit %d" % got[0]))

    def resubmit(self, rec, exclude, chain, folder, *, run=None, environ=None):
        """The job's batch script (`scontrol write batch_script`) submitted again with `sbatch
        --exclude`, its own options and the chain exported. -> (new job id or None, the
        command as text, Slurm's words when it failed)."""
        run = run or run_command_with_errors
        script = os.path.join(folder, "batch_script.%s" % rec.get("JobId", "job"))
        got = run(["scontrol", "write", "batch_script", rec.get("JobId", ""), script], CMD_TIMEOUT_S)
        if not got or got[0] != 0 or not os.path.isfile(script):
            return None, None, "Slurm gave no batch script: %s" % (
                _first_line(got[1]) if got else "scontrol did not answer")
        argv = resubmit_argv(rec, script, exclude, chain)
        env = dict((k, v) for k, v in (environ or os.environ).items()  # the job's own SLURM_* would
                   if not k.startswith(("SLURM_", "SBATCH_")) or k == "SLURM_CONF")  # steer sbatch
        got = run(argv, CMD_TIMEOUT_S * 2, env=env)
        if got and got[0] != 0 and "node configuration is not available" in got[1]:
            # No node is left outside the exclusions now (sbatch checks at submission, a held
            # job is checked when it may run): submitted held and released, it waits for one.
            argv.insert(2, "--hold")
            got = run(argv, CMD_TIMEOUT_S * 2, env=env)
            held = _submitted_id(got)
            if held:
                got = run(["scontrol", "release", held], CMD_TIMEOUT_S)
                got = (0, held) if got and got[0] == 0 else (1, "job %s stays held: scontrol release "
                                                             "%s failed" % (held, held))
        text, new_id = quote_argv(argv), _submitted_id(got)
        if not new_id and got is None:  # sbatch may have submitted it all the same
            return None, text, "sbatch did not answer within %gs%s" % (CMD_TIMEOUT_S * 2, UNANSWERED)
        if not new_id:
            return None, text, "sbatch refused: %s" % _first_line(got[1])
        return new_id, text, None


class Pbs(Scheduler):
    """PBS Pro and Torque. Its qstat shares Grid Engine's name, not its options: watch says
    it cannot follow PBS jobs (watch_kind) rather than misread them."""
    kind, tool, name, submit_tool, kill_wait_s = "pbs", "qstat", "PBS", "qsub", 10.0
    variables = ("PBS_JOBID", "", "PBS_ARRAY_INDEX PBS_ARRAYID", "", "PBS_JOBNAME", "PBS_QUEUE",
                 "", "PBS_O_WORKDIR", "PBS_ACCOUNT")

    def recognise(self, environ):
        sched = super(Pbs, self).recognise(environ)
        if sched:  # an array task's id: PBS Pro "1234[7].server", Torque "1234[7].host" or "1234-7"
            sched.update(nodelist=_read_nodefile(_env(environ, "PBS_NODEFILE")), array_job_id=None
                         if sched["array_task_id"] is None else re.split(r"[\[.-]", sched["job_id"], maxsplit=1)[0])
        return sched

    def read_limit(self, info, sched, run, environ):
        """`qstat -f ID` Resource_List.walltime."""
        rec = parse_qstat(_ask(run, ["qstat", "-f", _query_id(sched)], CMD_TIMEOUT_S, info["notes"]))
        info["limit_s"] = parse_pbs_duration(rec.get("Resource_List.walltime"))
        info["source"] = "qstat" if info["limit_s"] else None

    def why_ended(self, sched, run, notes):
        rec = parse_qstat(_ask(run, ["qstat", "-f", _query_id(sched)], CMD_TIMEOUT_S, notes))
        limit = parse_pbs_duration(rec.get("Resource_List.walltime"))
        used = parse_pbs_duration(rec.get("resources_used.walltime"))
        comment = rec.get("comment", "")
        if limit and used is not None and used >= limit - 60:
            return "walltime", "qstat: resources_used.walltime=%s of %s" % (
                rec["resources_used.walltime"], rec["Resource_List.walltime"])
        if re.search(r"preempt", comment, re.I):
            return "preempted", "qstat: comment=%s" % comment[:120]
        return None, None

    def here(self, which, run=None, environ=None):
        return super(Pbs, self).here(which) and not SGE.here(which, run, environ)


class Lsf(Scheduler):
    kind, tool, name, submit_tool, kill_wait_s = "lsf", "bjobs", "LSF", "bsub", 10.0
    variables = ("LSB_JOBID", "", "LSB_JOBINDEX", "", "LSB_JOBNAME", "LSB_QUEUE", "LSB_HOSTS",
                 "LS_SUBCWD", "LSB_PROJECT_NAME")

    def recognise(self, environ):
        sched = super(Lsf, self).recognise(environ)
        if sched:  # LSF sets LSB_JOBINDEX=0 outside arrays, and LSB_HOSTS a name per slot
            hosts, array = (sched["nodelist"] or "").split(), sched["array_task_id"] not in (None, "0")
            sched.update(array_job_id=sched["job_id"] if array else None,
                         array_task_id=sched["array_task_id"] if array else None,
                         nodelist=",".join(sorted(set(hosts), key=hosts.index)) or None)
        return sched

    def read_limit(self, info, sched, run, environ):
        """`bjobs -l ID` RUNLIMIT."""
        out = _ask(run, ["bjobs", "-l", _query_id(sched)], CMD_TIMEOUT_S, info["notes"]) or ""
        m = re.search(r"RUNLIMIT\s*\n\s*([\d.]+) min", out)
        info["limit_s"] = float(m.group(1)) * 60 if m else None
        info["source"] = "bjobs" if m else None

    def why_ended(self, sched, run, notes):
        out = _ask(run, ["bjobs", "-l", _query_id(sched)], CMD_TIMEOUT_S, notes) or ""
        flat = re.sub(r"\n\s{10,}", "", out)  # bjobs wraps long lines with deep indents
        for pattern, reason in ((r"TERM_RUNLIMIT|TERM_DEADLINE", "walltime"),
                                (r"TERM_PREEMPT", "preempted"),
                                (r"TERM_OWNER|TERM_ADMIN|TERM_FORCE_\w+", "cancelled")):
            m = re.search(pattern, flat)
            if m:
                return reason, "bjobs: %s" % m.group(0)
        return None, None


class Sge(Scheduler):
    """Son of Grid Engine 8.1.9 as observed. It warns by signal (-notify's SIGUSR2 before a
    kill, SIGUSR1 at s_rt) and names no cause on SIGTERM; qacct keeps the ended jobs."""
    kind, tool, name, submit_tool = "sge", "qstat", "Grid Engine", "qsub"
    state_note, evidence_note, kill_wait_s = "SGE job %s", True, 10.0
    notices = ("SIGUSR1", "SIGUSR2")
    variables = ("JOB_ID", "", "SGE_TASK_ID", "", "JOB_NAME", "QUEUE", "HOSTNAME", "SGE_O_WORKDIR",
                 "SGE_ACCOUNT")

    def recognise(self, environ):  # JOB_ID alone is no sign: any program may set it
        sched = _env(environ, "SGE_ROOT", "SGE_CELL", "SGE_JOB_SPOOL_DIR") and super(Sge, self).recognise(environ)
        if sched:  # SGE says "undefined" outside arrays
            array = sched["array_task_id"] not in (None, "undefined")
            sched.update(array_job_id=sched["job_id"] if array else None,
                         array_task_id=sched["array_task_id"] if array else None,
                         array_task_count=array_task_count(environ) if array else None)
        return sched

    def read_limit(self, info, sched, run, environ):
        """`qstat -j ID`'s hard resource_list: h_rt and s_rt."""
        rec = self.record(_query_id(sched), run, info["notes"])
        info["sge_limits"] = sge_limits(rec.get("hard resource_list"))
        info["limit_s"] = info["sge_limits"].get("h_rt")
        info["source"] = "qstat -j" if rec else None

    def kill_wait(self, sched, run):
        """-notify: SIGUSR2, the queue's notify time, then SIGKILL."""
        answer = sched.get("partition") and run(["qconf", "-sq", sched["partition"]], CMD_TIMEOUT_S)
        found = answer and answer[0] == 0 and re.search(r"^notify\s+(\S+)", answer[1], re.M)
        return (parse_sge_duration(found.group(1)) if found else None) or self.kill_wait_s

    def why_signalled(self, sched, name, start, now, *, time_limit=None, run=None):
        """Why SGE sent SIGUSR1/SIGUSR2 to this job (see sge_signal_reason). The limits come
        from the start (read_time_limit), else from `qstat -j` now; the state and the job's
        own start time from `qstat` while it still lists the job. -> (reason, evidence)."""
        run, notes = run or run_command, []
        limits = (time_limit or {}).get("sge_limits") if (time_limit or {}).get("source") else None
        if limits is None:  # not read at start: ask now; None again if qstat does not say
            rec = self.record(sched.get("job_id", ""), run, notes)
            limits = sge_limits(rec.get("hard resource_list")) if rec.get("job_number") else None
        state, job_start = parse_sge_listing(_ask(run, ["qstat"], CMD_TIMEOUT_S, notes),
                                             sched.get("job_id"), sched.get("array_task_id"))
        if job_start is None or job_start > now:
            job_start = start  # the wrapper's own start: later than the job's, never earlier
        reason, evidence = sge_signal_reason(name, now - min(start, job_start), limits, state)
        return reason, "; ".join([evidence] + notes)

    def restarts(self, environ):
        return "1" if environ.get("RESTARTED") == "1" else "0"

    restarts_exact = False

    def node(self, sched, environ):
        return sched.get("nodelist")

    def here(self, which, run=None, environ=None):
        """Grid Engine's qstat, not PBS's or Torque's: $SGE_ROOT is set, or `qstat -help`
        names it ("SGE 8.1.9", "UGE 8.6", "OGS/GE 2011.11")."""
        if not which("qstat"):
            return False
        if (os.environ if environ is None else environ).get("SGE_ROOT"):
            return True
        said = _safely(lambda: (run or run_command_with_errors)(["qstat", "-help"], CMD_TIMEOUT_S), None)
        return bool(said and re.search(r"^\s*(?:[SUA]GE|OGS/GE|Grid Engine)\b", said[1], re.M))

    def record(self, job_id, run=None, notes=None):
        """`qstat -j JOBID` as a dict ({} when SGE does not answer)."""
        return parse_sge_job(_ask(run or run_command, ["qstat", "-j", str(job_id)], CMD_TIMEOUT_S,
                                  [] if notes is None else notes))

    def poll(self, job_id, run=None, memory=None, notes=None, clock=time.time):
        """One look at an SGE job: `qstat -j` while SGE holds it, then `qacct -j` once it has
        ended. qacct has no -o/-e paths, so the submission record qstat gave is kept in
        memory. A job that left the queue with no accounting record (yet: it is flushed
        every few seconds; or at all: accounting off) is waited for SGE_ACCOUNTING_WAIT_S,
        then reported with what is known. -> job-info dicts (one per array task), [] when SGE
        does not know the job, None when qstat did not answer."""
        run, memory, asked = run or run_command, {} if memory is None else memory, []
        out = _ask(run, ["qstat", "-j", str(job_id)], CMD_TIMEOUT_S, asked)
        if out is None:  # only a qstat that did not answer is trouble (exit 1: not queued)
            if notes is not None:
                notes += asked
            return None
        notes = asked
        rec = parse_sge_job(out)
        if rec.get("job_number") == str(job_id):
            memory["sge_record"] = rec
            return [_sge_info(job_id, "queued or running", False, rec)]
        submitted = memory.get("sge_record") or {}
        records = same_submission(parse_qacct(_ask(run, ["qacct", "-j", str(job_id)], CMD_TIMEOUT_S,
                                                   notes)), submitted.get("submission_time"))
        if records:
            return [job_info_from_qacct(r, submitted) for r in records]
        if not submitted:
            return []
        gone = memory.setdefault("gone_at", clock())
        if clock() - gone < SGE_ACCOUNTING_WAIT_S:
            return [_sge_info(job_id, "left the queue, no qacct record yet", False, submitted)]
        info = _sge_info(job_id, "ended", True, submitted)
        info["facts"]["scheduler_evidence"] = (
            "SGE: the job left the queue %.0fs ago and qacct has no record of it (%s): its exit "
            "status and end reason are unknown" % (clock() - gone, "; ".join(notes) or "no accounting"))
        return [info]

    def says_unknown(self, job_id, run):
        got = _safely(lambda: run(["qstat", "-j", job_id], CMD_TIMEOUT_S), None)
        if not got or got[0] == 0 or "do not exist" not in got[1]:
            return None
        acct = _safely(lambda: run(["qacct", "-j", job_id], CMD_TIMEOUT_S), None)
        if not acct or acct[0] == 0 or "not found" not in acct[1]:
            return None  # a record, or no readable accounting: cannot say it is unknown
        return "qstat -j: %s; qacct -j: %s" % (" ".join(got[1].split()), _first_said_line(acct[1]))

    def plan_requeue(self, req, sched, dry, folder):
        """Check with SGE (a rerunnable job?) and leave qalter (hardware) and qmod -rj for last."""
        job = sched["job_id"]
        rec = self.record(job)
        refusal = sge_requeue_refusal(rec) or self.unconfirmed(req, rec)
        if refusal:
            return req.update(state="refused", reason=refusal)
        if req["cause"] == "hardware":
            req["exclude"] = sorted(set(req["exclude"] + [req["node"]]))
        steps = requeue_steps_sge(req, rec, job)
        req.update(command="; ".join(quote_argv(a) for a in steps), state="dry-run" if dry else "done")
        return None if dry else lambda: self.requeue(steps)

    def requeue(self, steps, run=None):
        """Run SGE's steps (requeue_steps_sge) -> None when SGE took them, else ("refused" or
        "uncertain", why). qmod exits 0 even when it refuses ("... jobs are not rerunable"):
        its words decide. A qmod that did not answer may still have rescheduled the job."""
        for argv in steps:
            got = (run or run_command_with_errors)(argv, CMD_TIMEOUT_S)
            if got is None and argv[0] == "qmod":
                return "uncertain", "qmod -rj did not answer within %gs%s" % (CMD_TIMEOUT_S, UNANSWERED)
            words = _first_line(got[1]) if got else "%s did not answer" % argv[0]
            if not got or got[0] != 0 or (argv[0] == "qmod" and "Pushed rescheduling" not in got[1]):
                return "refused", "SGE refused: %s" % (words or "%s exited %s" % (argv[0], got[0]))
        return None


SLURM, SGE = Slurm(), Sge()
#: In detection order: the first whose variables are set names the job.
SCHEDULERS = (SLURM, Pbs(), Lsf(), SGE)
NO_SCHEDULER = Scheduler()


def scheduler_named(kind):
    """The adapter of a scheduler kind ("slurm", ...); NO_SCHEDULER for "" or an unknown one."""
    return ([s for s in SCHEDULERS if s.kind == kind] or [NO_SCHEDULER])[0]


def detect_scheduler(environ):
    """The batch job this process runs in, from its environment; {} when none.
    Keys (only those known): kind, job_id, array_job_id, array_task_id, array_task_count,
    job_name, partition (the PBS/LSF/SGE queue too), nodelist, submit_dir, account,
    end_time (epoch, Slurm >= 23.02), label ("4242_7" or "4242") and dir_tag."""
    try:
        sched = next((f for f in (s.recognise(environ) for s in SCHEDULERS) if f), None)
    except (KeyError, ValueError):
        return {}
    if not sched:
        return {}
    sched = dict((k, v) for k, v in sched.items() if v is not None)
    sched["label"] = _scheduler_label(sched)
    sched["dir_tag"] = "%s-%s" % (sched["kind"], re.sub(r"[^A-Za-z0-9_.-]+", "_", sched["label"]))
    return sched


def _read_nodefile(path):
    if not path:
        return None
    try:
        with open(path) as f:
            hosts = [line.strip() for line in f if line.strip()]
    except (OSError, UnicodeDecodeError):
        return None
    return ",".join(sorted(set(hosts), key=hosts.index)) or None


# ---- asked from inside a job: the time limit at start, why it ends on SIGTERM ----

def read_kill_wait(sched, run=None):
    """Seconds between the scheduler's SIGTERM and its SIGKILL (Slurm's KillWait)."""
    return scheduler_named((sched or {}).get("kind")).kill_wait(sched, run or run_command)


def read_time_limit(sched, run=None, environ=None, pauses=()):
    """Call at start. -> {"limit_s", "end_time", "source", "notes"} (values None when unknown),
    as the job's scheduler says (its adapter's read_limit). pauses: seconds to wait before
    asking again while the scheduler does not answer (a controller busy as many jobs start:
    without the limit, a time-limit kill whose SIGTERM query is late reads as a plain one)."""
    sched = sched or {}
    for pause in (0.0,) + tuple(pauses):
        time.sleep(pause)
        info = {"limit_s": None, "end_time": None, "source": None, "notes": []}
        try:
            scheduler_named(sched.get("kind")).read_limit(info, sched, run or run_command,
                                                          environ or os.environ)
        except Exception as exc:  # never break the start of a run
            info["notes"].append("time limit unreadable: %s" % exc)
        if info["limit_s"] or info["end_time"] or info.get("unlimited") or not info["notes"]:
            break
    return info


def query_end_reason(sched, start, now, *, time_limit=None, run=None,
                     budget_s=END_REASON_BUDGET_S, margin_s=None, clock=time.time, said=None):
    """Ask the scheduler why this job is being ended. -> (reason, evidence), reason one of
    "walltime", "preempted", "cancelled" or None; evidence a short str (None if nothing known).
    time_limit: read_time_limit()'s dict (or seconds); used when the scheduler says nothing.
    said: a list that gets the scheduler's own answer, (reason, evidence), as it comes."""
    run, said = run or run_command, [] if said is None else said
    notes = []
    try:
        deadline = clock() + budget_s
        for ask in scheduler_named((sched or {}).get("kind")).end_askers():
            if clock() >= deadline:
                notes.append("no time left to ask the scheduler")
                break
            reason, evidence = ask(sched, run, notes)
            if reason or evidence:
                said.append((reason, evidence))
            if reason:
                return reason, evidence
            if evidence:  # the scheduler answered but named no cause: the others would agree
                notes.append(evidence)
                break
        reason, evidence = _reason_from_limit(start, now, time_limit, margin_s)
        if reason:
            return reason, evidence
    except Exception as exc:  # never raise out of the SIGTERM path
        notes.append("end reason: %s" % exc)
    return None, "; ".join(notes) or None


def slurm_record_reason(rec):
    """What one scontrol record says about why the job ends: (reason or None, evidence).
    Observed on Slurm 22.05
    during the SIGTERM phase: time limit -> JobState=COMPLETING Reason=TimeLimit;
    scancel -> COMPLETING Reason=None; preemption -> COMPLETING, PreemptTime set.
    Afterwards: TIMEOUT/TimeLimit, CANCELLED, PREEMPTED."""
    state, why = rec.get("JobState", ""), rec.get("Reason", "")
    evidence = "scontrol: JobState=%s Reason=%s" % (state, why)
    if state in SLURM_STATE_REASONS:
        return SLURM_STATE_REASONS[state], evidence
    if why == "TimeLimit":
        return "walltime", evidence
    preempt = rec.get("PreemptTime", "None")
    if preempt not in ("None", "Unknown", "N/A", ""):
        return "preempted", evidence + " PreemptTime=" + preempt
    if state == "COMPLETING" and why in ("None", ""):
        return "cancelled", evidence  # ended early, not by limit or preemption: scancel
    return None, evidence  # e.g. RUNNING: a signal sent by hand, or --signal before the limit


def slurm_preemption_unseen(rec):
    """Why the job is not requeued for a preemption Slurm did not make (a quoted line in the
    log), or None: a preempted job is no longer RUNNING when its wrapper ends, or shows a
    PreemptTime. Slurm is believed over the log, so a requeue never loops on a code error."""
    if rec.get("JobState") != "RUNNING" or slurm_record_reason(rec)[0] is not None:
        return None
    return ("not requeued: Slurm still runs the job (JobState=RUNNING, no PreemptTime): the "
            "preemption line in the log is not Slurm's")


# ---- requeue by cause (--requeue): the earlier attempts ----

def read_attempts(log_dir, sched, chain, restarts, *, own_dir=None, exact=True, before=None):
    """The run records (run.json's dicts) of a job's earlier attempts under --requeue, oldest
    first: the run directories under log_dir tagged with the job's label (a requeued Slurm
    job keeps its id) or one of its chain's (a resubmission's predecessors, REQUEUED_FROM_ENV);
    other ranks' directories are not attempts of their own.

    A job id alone names no job: two clusters may share $HOME, ids wrap. Slurm resets
    SubmitTime on every requeue, so no time of the job's is a key; what survives a requeue
    is the cluster, the job id, the chain exported at submission and Slurm's restart count.
    So a record is an earlier attempt when its cluster is this job's, it started before
    this attempt (`before`), and the chain it recorded is this job's up to it: the same
    chain for a record of this job's own id, whose restart count must also be below this
    one's (a first attempt has none of its own id, whatever an older job 777 left), the
    chain before that job for a record of a job in the chain. Of several records with one
    job id and restart count, the newest is this job's (an older job with the id came
    before it). SGE only says whether the job was restarted (exact False): there every
    record of its id with a restart mark up to its own counts."""
    cluster, wanted = sched.get("cluster"), dict((job, chain[:i]) for i, job in enumerate(chain))
    wanted[sched["label"]] = chain
    picked = {}
    for label, chain_then in wanted.items():
        for record in _tagged_records(log_dir, sched["kind"], label, own_dir):
            req, then = record["requeue"], record.get("scheduler") or {}
            count, start = req.get("restarts"), record.get("start") or 0
            if then.get("cluster") != cluster or req.get("chain") != chain_then \
                    or not isinstance(count, int) or (before and start >= before):
                continue
            if label == sched["label"] and not (count < restarts or (not exact and 0 < count <= restarts)):
                continue
            key = (label, count) if exact else id(record)
            if key not in picked or start > (picked[key].get("start") or 0):
                picked[key] = record
    return sorted(picked.values(), key=lambda r: r.get("start") or 0)


def _tagged_records(log_dir, kind, label, own_dir):
    """The --requeue run records (with a requeue entry) of the run directories tagged with a
    job's label; not own_dir, not other ranks'. A name proves nothing in a shared --log-dir
    (anyone may plant a link, or rename one of our directories, to a tagged name): the
    directory must be no link (run_dir_names), its run.json ours and no link, and the record
    must say it is that job's."""
    tag = "-%s-%s-" % (kind, re.sub(r"[^A-Za-z0-9_.-]+", "_", label))
    for name in run_dir_names(log_dir):
        folder = os.path.join(log_dir, name)
        if tag not in name or folder == own_dir or re.search(r"-rank[1-9]\d*(?:\.\d+)?$", name):
            continue
        path = os.path.join(folder, "run.json")
        try:
            st = os.lstat(path)
            record = read_json_file(path, RUN_JSON_MAX_BYTES) if stat.S_ISREG(st.st_mode) \
                and st.st_uid == os.geteuid() else None
        except (OSError, ValueError):
            continue  # a record cut short by a SIGKILL: that attempt is not counted
        if isinstance(record, dict) and isinstance(record.get("requeue"), dict) \
                and (record.get("scheduler") or {}).get("label") == label:
            yield record


def _submitted_id(got):
    """The job id `sbatch --parsable` printed ("4250" or "4250;cluster"), or None."""
    new_id = got[1].strip().split(";")[0].strip() if got and got[0] == 0 else ""
    return new_id if new_id.isdigit() else None


def sge_output_path(path_list, rec, task_id, stream):
    """Where SGE wrote a job's stdout ('o') or stderr ('e'): qstat -j's stdout_path_list
    ('NONE:NONE:/dir' or 'host:/file'; a directory gets the default name), expanded
    ($JOB_ID, $TASK_ID, $JOB_NAME, $USER, $HOSTNAME); default <name>.o<id>[.<task>] in the
    job's cwd, else in its home. None when it went to /dev/null."""
    name, job_id = rec.get("job_name", ""), rec.get("job_number", "")
    default = "%s.%s%s%s" % (name, stream, job_id, ".%s" % task_id if task_id else "")
    base = rec.get("cwd") or rec.get("sge_o_home") or ""
    path = (path_list or "").split(",")[0]
    path = path.rsplit(":", 1)[-1] if path and path not in ("NONE",) else ""
    if not path:
        return os.path.join(base, default)
    values = {"JOB_ID": job_id, "TASK_ID": str(task_id or "undefined"), "JOB_NAME": name,
              "USER": rec.get("owner", ""), "HOSTNAME": rec.get("hostname", "")}
    path = re.sub(r"\$(JOB_ID|TASK_ID|JOB_NAME|USER|HOSTNAME)", lambda m: values[m.group(1)], path)
    if path == "/dev/null":
        return None
    path = os.path.join(base, path) if not os.path.isabs(path) else path
    return os.path.join(path, default) if os.path.isdir(path) else path


# ==== Edges: host probes (cgroups, GPUs) ====

# ---- cgroup memory ----

def address_space_limit():
    """The address-space limit (ulimit -v) the job inherits from us, in bytes, or None."""
    import resource
    soft = resource.getrlimit(resource.RLIMIT_AS)[0]
    return None if soft == resource.RLIM_INFINITY else soft


def read_cgroup_memory(pid=None, proc_root="/proc", cgroup_root="/sys/fs/cgroup"):
    """The memory cgroup of pid (default: this process). -> dict with version (1|2), path,
    oom_kill, oom (v2), failcnt (v1), peak_bytes, limit_bytes (nearest finite limit at or
    above the cgroup), notes. Counters are None when unreadable."""
    info = {"version": None, "path": None, "oom_kill": None, "oom": None, "failcnt": None,
            "peak_bytes": None, "limit_bytes": None, "cpu_usec": None, "notes": []}
    try:
        _fill_cgroup(info, pid, proc_root, cgroup_root)
    except Exception as exc:
        info["notes"].append("cgroup memory unreadable: %s" % exc)
    return info


def _fill_cgroup(info, pid, proc_root, cgroup_root):
    listing = os.path.join(proc_root, str(pid) if pid else "self", "cgroup")
    try:
        with open(listing) as f:
            lines = f.read().splitlines()
    except OSError as exc:
        info["notes"].append("cannot read %s: %s" % (listing, exc.strerror))
        return
    v1 = v2 = None
    for line in lines:
        parts = line.split(":", 2)
        if len(parts) == 3 and "memory" in parts[1].split(","):
            v1 = parts[2]
        elif len(parts) == 3 and parts[0] == "0" and parts[1] == "":
            v2 = parts[2]
    if v1 is not None:
        _read_v1(info, _cgroup_dir(os.path.join(cgroup_root, "memory"), v1))
    elif v2 is not None and os.path.exists(os.path.join(cgroup_root, "cgroup.controllers")):
        _read_v2(info, _cgroup_dir(cgroup_root, v2))
    else:
        info["notes"].append("no memory cgroup found for this process")


def _cgroup_dir(mount, rel):
    """The cgroup's directory; in a cgroup namespace the mount root is the cgroup itself."""
    path = os.path.normpath(os.path.join(mount, rel.lstrip("/")))
    return path if os.path.isdir(path) else mount


def _read_flat(path):
    """'key value' lines -> dict of ints (memory.events, memory.oom_control)."""
    values = {}
    with open(path) as f:
        for line in f:
            parts = line.split()
            if len(parts) == 2 and parts[1].lstrip("-").isdigit():
                values[parts[0]] = int(parts[1])
    return values


def _read_int(path):
    with open(path) as f:
        text = f.read().strip()
    return None if text == "max" else int(text)


def _read_into(info, key, path, reader):
    try:
        info[key] = reader(path)
    except (OSError, ValueError) as exc:
        if os.path.exists(os.path.dirname(path)) and os.path.basename(path) not in ("memory.peak", "cpu.stat"):
            info["notes"].append("cannot read %s: %s" % (path, getattr(exc, "strerror", exc)))


def _read_v2(info, path):
    info.update(version=2, path=path)
    events = {}
    try:
        events = _read_flat(os.path.join(path, "memory.events"))
    except (OSError, ValueError) as exc:
        info["notes"].append("cannot read %s/memory.events: %s" % (path, getattr(exc, "strerror", exc)))
    info["oom_kill"], info["oom"] = events.get("oom_kill"), events.get("oom")
    _read_into(info, "peak_bytes", os.path.join(path, "memory.peak"), _read_int)  # kernel >= 5.19
    _read_into(info, "cpu_usec", os.path.join(path, "cpu.stat"), lambda p: _read_flat(p).get("usage_usec"))
    info["limit_bytes"] = _nearest_limit(path, "memory.max")


def _read_v1(info, path):
    info.update(version=1, path=path)
    try:
        info["oom_kill"] = _read_flat(os.path.join(path, "memory.oom_control")).get("oom_kill")
    except (OSError, ValueError) as exc:
        info["notes"].append("cannot read %s/memory.oom_control: %s" % (path, getattr(exc, "strerror", exc)))
    _read_into(info, "failcnt", os.path.join(path, "memory.failcnt"), _read_int)
    _read_into(info, "peak_bytes", os.path.join(path, "memory.max_usage_in_bytes"), _read_int)
    info["limit_bytes"] = _nearest_limit(path, "memory.limit_in_bytes")


def _nearest_limit(path, name, unlimited=1 << 60):
    """The smallest finite limit from the cgroup up to the mount (Slurm sets it on the
    job or step, not on the task's leaf). v1 'unlimited' is a huge number."""
    best, here = None, path
    for _ in range(32):
        try:
            value = _read_int(os.path.join(here, name))
        except (OSError, ValueError):
            value = None
        if value is not None and value < unlimited and (best is None or value < best):
            best = value
        parent = os.path.dirname(here)
        if parent == here or not os.path.exists(os.path.join(parent, name)):
            break
        here = parent
    return best


# ---- GPUs ----

def query_gpus(timeout=GPU_TIMEOUT_S, run=None, environ=None):
    """One nvidia-smi query. -> (list of per-GPU dicts, notes). Dict keys: index, name,
    mem_used_mib, mem_total_mib, util_pct, temp_c, power_w, ecc_uncorrected (None when
    nvidia-smi says [N/A] or [Not Supported]). Only the GPUs in CUDA_VISIBLE_DEVICES when
    it lists indices and nvidia-smi shows more."""
    notes = []
    argv = ["nvidia-smi", "--query-gpu=" + ",".join(GPU_FIELDS), "--format=csv,noheader,nounits"]
    try:
        got = (run or run_command)(argv, timeout)
    except Exception as exc:
        return [], ["nvidia-smi: %s" % exc]
    if got is None:
        return [], ["nvidia-smi missing or no answer within %gs" % timeout]
    rc, out = got
    if rc != 0:
        first = (out.strip().splitlines() or [""])[0][:200]
        return [], ["nvidia-smi failed (exit %s)%s" % (rc, ": " + first if first else "")]
    gpus = [g for g in (parse_gpu_line(line) for line in out.splitlines()) if g]
    return _visible_only(gpus, environ if environ is not None else os.environ), notes


def _visible_only(gpus, environ):
    wanted = environ.get("CUDA_VISIBLE_DEVICES", "")
    ids = [p.strip() for p in wanted.split(",") if p.strip()]
    if not ids or not all(p.isdigit() for p in ids) or len(gpus) <= len(ids):
        return gpus
    keep = set(int(p) for p in ids)
    return [g for g in gpus if g["index"] in keep]


class TreeSampler(object):
    """The child's process tree, read from /proc every interval_s: the peak of its summed RSS
    and the CPU time its processes used. For a job with no cgroup of its own, whose work runs
    in processes a launcher's rusage does not cover (its children are counted only as
    they are waited for, and only the largest one's RSS)."""

    def __init__(self, pid, interval_s=TREE_SAMPLE_S):
        import threading
        self.pid, self.interval_s = pid, interval_s
        self.peak_kib, self.cpu_ticks, self.samples = 0, {}, 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def start(self):
        self._thread.start()
        return self

    def _loop(self):
        # Not at once: at the start the tree is the child alone, and a command that ends
        # within TREE_FIRST_SAMPLE_S (its own rusage is exact then) is not kept waiting for
        # a walk over /proc at its end.
        wait = min(TREE_FIRST_SAMPLE_S, self.interval_s)
        while not self._stop.wait(wait):
            _safely(self._sample, None)
            wait = self.interval_s

    def _sample(self):
        page_kib = os.sysconf("SC_PAGE_SIZE") // 1024
        total = 0
        for pid in [self.pid] + _descendants(self.pid):
            try:
                with open("/proc/%d/statm" % pid) as f:
                    total += int(f.read().split()[1]) * page_kib
                with open("/proc/%d/stat" % pid) as f:
                    fields = f.read().rsplit(")", 1)[1].split()
                self.cpu_ticks[pid] = int(fields[11]) + int(fields[12])
            except (OSError, IndexError, ValueError):
                continue  # gone between the listing and the read
        self.peak_kib = max(self.peak_kib, total)
        self.samples += 1

    def stop(self):
        """-> the figures for rusage (tree_*), after one last sample."""
        self._stop.set()
        self._thread.join(2.0)
        ticks = float(os.sysconf("SC_CLK_TCK"))
        return {"tree_peak_rss_kib": self.peak_kib, "tree_cpu_s": round(sum(self.cpu_ticks.values()) / ticks, 2),
                "tree_samples": self.samples, "tree_interval_s": self.interval_s}


class GpuSampler(object):
    """Samples nvidia-smi in a daemon thread: at start, every `interval` s (0: start and
    end only), and at stop(). Never blocks the caller beyond one bounded query."""

    def __init__(self, interval=60, timeout=GPU_TIMEOUT_S, run=None, clock=time.time):
        import threading
        self.interval = float(interval or 0)
        self.timeout = timeout
        self.run = run
        self.clock = clock
        self.samples = []   # (time, [gpu dicts])
        self.notes = []
        self._failures = 0
        self._answered = True  # the latest query listed every GPU the first one did
        self._given_up = False
        self._busy = False
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = None

    def start(self):
        import threading
        self._thread = threading.Thread(target=self._loop, name="gpualert-gpu", daemon=True)
        self._thread.start()
        return self

    def _loop(self):
        self.sample()
        while not self._given_up and not self._stop.wait(self.interval or None):
            self.sample()

    def sample(self):
        """One query; on a missing nvidia-smi or repeated hangs, stop asking."""
        if self._given_up:
            return
        self._busy = True
        try:
            gpus, notes = query_gpus(self.timeout, self.run)
        finally:
            self._busy = False
        with self._lock:
            if gpus:
                first = set(g["index"] for g in self.samples[0][1]) if self.samples else set()
                self._answered = first <= set(g["index"] for g in gpus)
                self.samples.append((self.clock(), gpus))
                self._failures = 0
                return
            self._answered = False
            self._failures += 1
            for note in notes:
                if note not in self.notes:
                    self.notes.append(note)
            if not self.samples or self._failures >= GPU_GIVE_UP_FAILURES:
                self._given_up = True

    def stop(self, final_sample=True):
        """Stop sampling; -> summary dict ({} when no GPU was ever seen and nothing to say).
        Waits at most one query: a query in flight when stop() is called is the end sample."""
        try:
            in_flight = self._busy
            self._stop.set()
            if self._thread is not None:
                self._thread.join(self.timeout + 1.0)
            if final_sample and not in_flight and not (self._thread and self._thread.is_alive()):
                self.sample()
            with self._lock:
                summary = summarize_gpu_samples(list(self.samples), list(self.notes))
                if self.samples and not self._answered:  # a GPU fallen off the bus, hung
                    summary["lost"] = "a GPU that answered at the start did not at the end (%s)" % (
                        "; ".join(self.notes[-1:]) or "missing from the list")
                return summary
        except Exception as exc:
            return {"notes": ["GPU sampler: %s" % exc]}


# ==== Edges: the run records ====

# Every run's run.json read back (`runs`, `digest`) and old run directories removed (`prune`).

RUNS_INDEX_NAME = ".gpualert-runs-index.json"  # in --log-dir; a cache, never needed
RUNS_INDEX_FORMAT = 3
RUNS_INDEX_MAX_BYTES = 256 << 20  # about 400,000 runs


def read_runs(log_dir, warn=None):
    """Every finished run under log_dir, whichever host wrote it, as run_summary dicts (in no
    order). A run.json that cannot be read or is not a run record is skipped with one warn()
    line naming it; one owned by another user (anyone may plant one in a shared --log-dir)
    is not read, and one line counts them. The index beside them caches each good summary
    under its run.json's inode, mtime and size, so only new or rewritten records are parsed;
    it is read only if it is ours, its entries are checked as fresh ones are, and failures
    are never cached: a missing, stale, broken or planted index costs time, never a wrong
    answer."""
    old = _read_runs_index(log_dir)
    new, runs, foreign = {}, [], []
    for name in run_dir_names(log_dir, warn):
        run_dir = os.path.join(log_dir, name)
        try:
            st = os.lstat(os.path.join(run_dir, "run.json"))
        except OSError:
            continue  # still running, or its wrapper died before the end: no record
        if st.st_uid != os.geteuid():
            foreign.append(os.path.join(run_dir, "run.json"))
            continue
        key = [st.st_ino, st.st_mtime_ns, st.st_size]
        summary = _cached_summary(old.get(name), key, run_dir)
        if summary is not None:
            new[name] = old[name]
        else:
            summary, key = _summary_or_problem(run_dir)
            if "problem" in summary:
                if warn:
                    warn("warning: skipping %s: %s" % (os.path.join(run_dir, "run.json"), summary["problem"]))
                continue
            new[name] = [key, {f: summary[f] for f in RUN_STORED_FIELDS}]
        runs.append(summary)  # run_dir: where this host sees it
    if foreign and warn:
        warn("warning: skipping %d run record%s owned by other users (not counted), e.g. %s" % (
            len(foreign), "" if len(foreign) == 1 else "s", foreign[0]))
    if new != old:
        _write_runs_index(log_dir, new)
    return runs


def _cached_summary(entry, key, run_dir):
    """The summary the index holds for a run.json with this key, checked; else None."""
    if not isinstance(entry, list) or len(entry) != 2 or entry[0] != key:
        return None
    try:
        return summary_of(entry[1], run_dir)
    except (ValueError, TypeError):
        return None


def _summary_or_problem(run_dir):
    """run_summary of run_dir's run.json (a plain file of ours, bounded), or {"problem": why
    it cannot be read}. -> (that, [inode, mtime_ns, size] of what was read, or None)."""
    import json
    try:
        data, st = read_regular(os.path.join(run_dir, "run.json"), RUN_JSON_MAX_BYTES, own=True)
        summary = run_summary(json.loads(data.decode("utf-8")), run_dir)
        return summary, [st.st_ino, st.st_mtime_ns, st.st_size]
    except (OSError, ValueError, RecursionError, OverflowError) as exc:  # JSONDecodeError too
        return {"problem": _clean(getattr(exc, "strerror", None) or exc, 200) or type(exc).__name__}, None


def _read_runs_index(log_dir):
    try:
        data = read_json_file(os.path.join(log_dir, RUNS_INDEX_NAME), RUNS_INDEX_MAX_BYTES)
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict) or data.get("format") != RUNS_INDEX_FORMAT \
            or data.get("gpualert") != __version__ or not isinstance(data.get("runs"), dict):
        return {}
    return data["runs"]


def _write_runs_index(log_dir, entries):
    """Written whole and renamed (hosts sharing the directory may race: the last one wins);
    private, as the records are, through the outbox's writer (O_EXCL under a name no one can
    guess, so a link planted in a shared --log-dir is never followed; the rename replaces a
    planted index, or fails in a sticky directory). A failure leaves the next call slower."""
    import json
    try:
        data = json.dumps(json_ready({"format": RUNS_INDEX_FORMAT, "gpualert": __version__,
                                      "runs": entries}),
                          separators=(",", ":")).encode("utf-8")
        _write_private(log_dir, RUNS_INDEX_NAME, data)
    except (OSError, ValueError, TypeError):
        pass


CHILD_PID_NAME = ".child-pid"  # in a run directory: "HOST PID" of the child, while it runs


def run_end(run_dir, warn=None):
    """When a run directory's run ended: (epoch, None), or (None, why it counts as not ended).
    An end ahead of our clock (another host's clock is wrong) counts as its run.json's mtime
    when that is not ahead too. With no run.json, its wrapper is still running or died; it
    is taken as ended (at its newest file's time) only when its log's header names this host
    and a pid that is gone, and the child it started (CHILD_PID_NAME) is gone with its group."""
    path = os.path.join(run_dir, "run.json")
    if os.path.lexists(path):
        summary, key = _summary_or_problem(run_dir)
        if "problem" in summary:
            if warn:
                warn("warning: keeping %s: run.json unreadable (%s)" % (run_dir, summary["problem"]))
            return None, "an unreadable run.json"
        end, now = summary["end"], time.time()
        if end and end > now + CLOCK_SKEW_S:
            end = key[1] / 1e9 if key[1] / 1e9 <= now + CLOCK_SKEW_S else None
            return end, None if end else "an end time in the future (a wrong clock)"
        return end or None, None if end else "no end time in run.json"
    header = _log_header(run_dir)
    pid = header.get("pid", "")
    if header.get("host") != _hostname(short=True) or not pid.isdigit() or _pid_alive(int(pid)) \
            or _child_alive(run_dir):
        return None, "no end record (still running, or its wrapper was killed on another host)"
    return max([0.0] + [st.st_mtime for _, st in _walk_files(run_dir)]) or None, None


def note_child(run_dir, pid, dir_fd=None):
    """Leave the child's pid in its run directory: when the wrapper is SIGKILLed the child
    may run on, and prune must still see the run as going (_child_alive). Through dir_fd
    when given, as run.json is (never into a directory swapped in at its path)."""
    path = CHILD_PID_NAME if dir_fd is not None else os.path.join(run_dir, CHILD_PID_NAME)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600, dir_fd=dir_fd)
    with os.fdopen(fd, "w") as handle:
        handle.write("%s %d\n" % (_hostname(short=True), pid))


def _child_alive(run_dir):
    """Is the child noted in run_dir (note_child), or a process of its group, alive here?"""
    try:
        host, pid = read_regular(os.path.join(run_dir, CHILD_PID_NAME), 200)[0].decode().split()
        pid = int(pid)
    except (OSError, ValueError):
        return False
    if host != _hostname(short=True) or pid <= 0:
        return False
    try:
        os.killpg(pid, 0)  # its own group, as gpualert starts it: a grandchild counts too
        return True
    except ProcessLookupError:
        return _pid_alive(pid)
    except OSError:
        return True  # EPERM: alive, someone else's


def _log_header(run_dir):
    """The key: value lines of gpualert's header at the top of a run's log; {} if none."""
    import glob
    for log in sorted(glob.glob(os.path.join(run_dir, "output*.log")))[:1]:
        try:
            lines = _decode(read_regular(log, 16 * 1024, head=True)[0]).split("\n")
        except OSError:  # a FIFO or a link too: no header of gpualert's
            return {}
        if lines and lines[0].startswith(HEADER_MARK + " run started"):
            return dict(line.split(": ", 1) for line in lines[1:12] if ": " in line)
    return {}


def _walk_files(folder):
    """(path, lstat) of everything under folder, links not followed."""
    for top, dirs, files in os.walk(folder):
        for name in dirs + files:
            path = os.path.join(top, name)
            try:
                yield path, os.lstat(path)
            except OSError:
                continue


def disk_usage(folder):
    """Bytes a directory tree takes on disk (du), links not followed."""
    return sum(getattr(st, "st_blocks", 0) * 512 or st.st_size for _, st in _walk_files(folder))


PRUNE_STAGING = ".gpualert-prune-"  # + pid-random: a run directory prune is removing
PRUNE_MARK = ".gpualert-pruning"     # inside it, put there by our prune alone


def prune_runs(log_dir, cutoff, keep=(), dry_run=False, warn=None):
    """Remove the run directories under log_dir whose run ended before `cutoff` (epoch).
    Never the outbox, a link, another user's directory, a run not known to have ended
    (run_end) or one named in `keep` (a message still waiting names it). Each is checked
    and removed through one descriptor (_prune_run), and a removal cut short earlier is
    finished. -> {"removed": [(path, bytes, end)], "kept": {why: n}, "failed": [line]}"""
    out = {"removed": [], "kept": {}, "failed": []}
    keep = set(os.path.realpath(k) for k in keep)
    names = run_dir_names(log_dir, warn)
    staged = [] if foreign_link(log_dir) else [n for n in _listdir(log_dir) if n.startswith(PRUNE_STAGING)]
    for name in names + staged:
        try:
            fd = open_own_dir(os.path.join(log_dir, name))
        except OSError:
            continue  # gone, a link, not a directory, or another user's
        try:
            if name in staged or _marked(fd):  # its name may have been swapped since it was staged
                _finish_staged(out, log_dir, name, fd, dry_run)
            else:
                _prune_run(out, log_dir, name, fd, (cutoff, keep, dry_run), warn=warn)
        finally:
            os.close(fd)
    return out


def _held_path(fd, path):
    """A path to the directory fd holds, whatever is renamed at `path` meanwhile (Linux's
    /proc/self/fd); elsewhere `path` itself."""
    held = "/proc/self/fd/%d" % fd
    return held if os.path.isdir(held) else path


def _prune_run(out, log_dir, name, fd, rule, *, warn):
    """prune_runs for one run directory, open as fd: checked through fd (a member of a
    group-writable --log-dir may swap two of our directories' names at any moment), so
    what is removed is what was checked."""
    cutoff, keep, dry_run = rule
    path = os.path.join(log_dir, name)
    held = _held_path(fd, path)
    shown = lambda text: text.replace(held, path)  # noqa: E731
    end, why = run_end(held, warn and (lambda line: warn(shown(line))))
    if end is not None and end >= cutoff:
        why = "newer"
    elif end is not None and os.path.realpath(path) in keep:
        why = "a message in the outbox names it"
    if why:
        out["kept"][why] = out["kept"].get(why, 0) + 1
        return
    size = disk_usage(held)
    problem = _not_removable(log_dir, held)
    if not problem and not dry_run:
        problem = _remove_run_dir(log_dir, name, fd, size)
    if problem:
        out["failed"].append("%s: %s" % (path, shown(problem)))
    else:
        out["removed"].append((path, size, end))


def _not_removable(parent, tree):
    """Why removing tree (in parent) would stop halfway (a directory we cannot write: its
    parent or one inside it), checked before anything goes; None when it can remove it all.
    A run left half removed would lose its record and count as not ended for good."""
    for folder in [parent] + [top for top, _, _ in os.walk(tree)]:
        if not os.access(folder, os.W_OK | os.X_OK):
            return "%s is not writable (nothing removed)" % folder
    return None


def _remove_run_dir(log_dir, name, fd, size):
    """Remove the run directory `name` that fd holds: marked as our prune's (PRUNE_MARK,
    through fd), renamed to a staging name, and removed only if what that rename moved is
    the directory fd holds (device, inode, owner). Anything else swapped in at its name is
    put back and skipped: a race makes prune skip, never remove the wrong directory. A
    removal cut short leaves the staging name and the mark: the next prune finishes it.
    -> None, or why nothing (or not all) was removed."""
    staging = "%s%d-%s" % (PRUNE_STAGING, os.getpid(), os.urandom(6).hex())
    try:
        _unmark(fd)  # a stale one: the mark must be this prune's file
        os.close(os.open(PRUNE_MARK, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600, dir_fd=fd))
        os.rename(os.path.join(log_dir, name), os.path.join(log_dir, staging))
    except FileNotFoundError:
        return None  # another prune of ours (cron on a second login node) has it: its mark stays
    except OSError as exc:
        _unmark(fd)
        return "%s (nothing removed)" % (exc.strerror or exc)
    if run_dir_moved(os.path.join(log_dir, staging), fd):  # fd is ours (open_own_dir)
        _unmark(fd)
        try:
            os.rename(os.path.join(log_dir, staging), os.path.join(log_dir, name))
        except OSError:
            return ("another directory was swapped in at its name while prune looked: skipped; "
                    "the one found there is now %s (rename it back)" % os.path.join(log_dir, staging))
        return "another directory was swapped in at its name while prune looked: skipped, nothing removed"
    return _empty_and_remove(log_dir, staging, fd, size)


def _empty_and_remove(log_dir, staging, fd, size):
    """Empty the staged directory through fd, then remove its name once it is still that
    directory (rmdir takes only an empty one). -> None, or why not all went."""
    try:
        _empty_dir(fd, keep=PRUNE_MARK)  # the mark stays until the end: it says "finish me"
        if run_dir_moved(os.path.join(log_dir, staging), fd):
            if os.fstat(fd).st_nlink == 0:  # removed: another prune of ours finished it
                return None
            raise OSError(errno.EBUSY, "its name was swapped while prune removed it")
        _unmark(fd)
        os.rmdir(os.path.join(log_dir, staging))
    except FileNotFoundError:
        pass
    except OSError as exc:
        left = disk_usage(_held_path(fd, os.path.join(log_dir, staging)))
        return "%s (%s of %s removed; a later prune finishes it: %s)" % (
            exc.strerror or exc, _format_size(max(0, size - left)), _format_size(size),
            os.path.join(log_dir, staging))
    return None


def _empty_dir(fd, keep=None):
    """Remove everything inside the directory open as fd but `keep`, through descriptors,
    links never followed: whatever is renamed in the shared parent meanwhile, nothing
    outside it goes (shutil.rmtree starts from a path; its dir_fd needs Python 3.11)."""
    for name in os.listdir(fd):
        if name == keep:
            continue
        try:
            if stat.S_ISDIR(os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode):
                sub = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
                try:
                    _empty_dir(sub)
                finally:
                    os.close(sub)
                os.rmdir(name, dir_fd=fd)
            else:
                os.unlink(name, dir_fd=fd)
        except FileNotFoundError:
            continue  # another prune of ours is removing it too


def _marked(fd):
    """The stat of our prune's mark in the directory fd holds (a file of ours, no link), or None."""
    try:
        mark = os.stat(PRUNE_MARK, dir_fd=fd, follow_symlinks=False)
    except OSError:
        return None
    return mark if stat.S_ISREG(mark.st_mode) and mark.st_uid == os.geteuid() else None


def _unmark(fd):
    try:
        os.unlink(PRUNE_MARK, dir_fd=fd)
    except OSError:
        pass


def _finish_staged(out, log_dir, name, fd, dry_run):
    """A removal an earlier prune began (a staging name) is finished, if our prune's mark is
    in it: a file of ours in a directory of ours. A staging name alone proves nothing:
    anyone who may write a shared --log-dir may rename a run of ours to one."""
    mark = _marked(fd)
    if not mark:
        return
    path = os.path.join(log_dir, name)
    size = disk_usage(_held_path(fd, path))
    problem = None if dry_run else _empty_and_remove(log_dir, name, fd, size)
    if problem:
        out["failed"].append("%s: %s" % (path, problem))
    else:
        out["removed"].append((path, size, mark.st_mtime))


# ==== Notification policy: ranks, arrays, the hourly cap, chat delivery ====

def should_notify(status, policy):
    if policy == "never":
        return False
    return policy == "always" or status != "SUCCESS"


def channel_wants(channel, status, notify):
    """Does this channel get a message with this status? Its own when, else --notify."""
    return should_notify(status, channel.when or notify)


def should_notify_rank(environ, all_ranks):
    """Only rank 0 (or a process outside any multi-rank launch) notifies, unless all_ranks."""
    if all_ranks:
        return True
    rank = job_rank(environ)
    return rank is None or rank == 0


class ArraySummary(object):
    """--array-summary: each task appends one JSON line to <dir>/<array_job_id>.jsonl under
    a lock; the task that completes the set gets the summary, exactly once (a marker file
    made with O_EXCL). Counts distinct task ids; a requeued task's last record wins."""

    def __init__(self, directory, array_job_id, *, task_count=None, clock=time.time,
                 environ=None, cluster=None):
        self.dir = directory
        self.array_job_id = str(array_job_id)
        if task_count is None:
            task_count = array_task_count(os.environ if environ is None else environ)
        self.task_count = task_count
        self.clock = clock
        self.notes = []
        self.already_sent = False  # set by record(): nothing more will summarize this task
        # Clusters that share a home number their jobs independently: one id, two arrays.
        key = "%s-%s" % (cluster, self.array_job_id) if cluster else self.array_job_id
        base = os.path.join(directory, re.sub(r"[^\w.-]+", "_", key))
        self.path, self.lock_path, self.marker = base + ".jsonl", base + ".lock", base + ".summary-sent"

    def record(self, task_id, status, cls=None, exit_code=None, *, host=None, duration_s=None,
               extra=None, ended_elsewhere=None):
        """Append this task's line. -> the summary dict if this task completed the set, else None.
        ended_elsewhere: a callable -> {task id: scheduler state} of tasks that ended (sacct);
        a task that ended without reporting (node failure, cancelled) counts as done."""
        import json
        entry = {"task": str(task_id), "status": status, "class": cls, "exit": exit_code,
                 "host": host, "duration_s": duration_s, "time": self.clock()}
        entry.update(extra or {})
        try:
            private_dir(self.dir)
            fd = _locked(self.lock_path)
            try:
                # The summary went out before this record: a task requeued after it, or an
                # array that reuses the id (another cluster sharing this home, ids wrapped).
                self.already_sent = os.path.exists(self.marker)
                flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND
                with os.fdopen(os.open(self.path, flags, 0o600), "a") as f:
                    f.write(json.dumps(entry, sort_keys=True) + "\n")
                    f.flush()
                    os.fsync(f.fileno())
                entries = self._read()
            finally:
                _unlock(fd)
        except (OSError, ValueError) as exc:
            self.notes.append("array summary: %s" % exc)
            return None
        if self.task_count is None:
            self.notes.append("array summary: the number of tasks is unknown")
            return None
        missing = []
        if len(entries) < self.task_count and ended_elsewhere is not None:
            reported = set(str(e.get("task")) for e in entries)
            ended = _safely(ended_elsewhere, {}) or {}
            missing = sorted(((t, st) for t, st in ended.items() if str(t) not in reported),
                             key=lambda ts: _task_order(ts[0]))
        if len(entries) + len(missing) < self.task_count or not self._claim():
            return None
        summary = summarize_array(self.array_job_id, entries, self.task_count)
        summary["missing"] = missing
        return summary

    def _read(self):
        import json
        latest = {}
        with open(self.path) as f:
            for line in f:
                try:
                    entry = json.loads(line)
                except ValueError:
                    continue  # a torn line from a crashed writer
                latest[entry.get("task")] = entry
        return list(latest.values())

    def _claim(self):
        try:
            os.close(os.open(self.marker, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
            return True
        except OSError:
            return False


def summarize_array(array_job_id, entries, expected=None, examples=5):
    """Task records -> {"array_job_id", "tasks", "expected", "by_status", "by_class",
    "worst": up to `examples` records worst first, "duration_s": {min, max, mean}}."""
    by_status, by_class = {}, {}
    entries = [dict(e, status=counted_status(e.get("status"), e.get("class"))) for e in entries]
    for e in entries:
        by_status[e.get("status")] = by_status.get(e.get("status"), 0) + 1
        if e.get("class"):
            by_class[e["class"]] = by_class.get(e["class"], 0) + 1

    def severity(e):
        status = e.get("status")
        rank = STATUSES.index(status) if status in STATUSES else 0
        return (rank, str(e.get("task")))
    bad = [e for e in sorted(entries, key=severity) if e.get("status") not in ("SUCCESS", None)]
    durations = [e["duration_s"] for e in entries if isinstance(e.get("duration_s"), (int, float))]
    return {"array_job_id": str(array_job_id), "tasks": len(entries), "expected": expected,
            "by_status": by_status, "by_class": by_class, "worst": bad[:examples],
            "entries": sorted(entries, key=lambda e: _task_order(e.get("task"))),
            "duration_s": {"min": min(durations), "max": max(durations),
                           "mean": round(sum(durations) / len(durations), 1)} if durations else {}}


def _task_order(task):
    task = str(task)
    return (0, int(task), "") if task.isdigit() else (1, 0, task)


def deliver_capped(msg, cfg, deadline=None, capped=True, on_spooled=None, *, over=None):
    """Deliver, unless the configuration is broken or the hourly cap is reached: then the
    message waits in the outbox (never lost; `resend` sends it when the user chooses).
    over: the claimed item the message replaces on disk (see deliver)."""
    reason = None
    if cfg.get("config_broken") and not cfg["dry_run"]:
        reason = "configuration problem: %s" % cfg["config_broken"]
    elif cfg["max_per_hour"] and capped and not cfg["dry_run"]:
        if not _limiter(cfg).allow():
            reason = "more than %d messages this hour (--max-per-hour)" % cfg["max_per_hour"]
    if reason is None:
        return deliver(msg, cfg, deadline, on_spooled=on_spooled, over=over)
    delivery = _outbox_result(msg, cfg, "held: %s" % reason, "outbox", over=over)
    if on_spooled:
        on_spooled(delivery.get("outbox_path"))
    return delivery


ARRAY_SUMMARY_SENT = "sent"  # _array_report: the summary went out before this task reported


def _array_report(result):
    """Record this task; the task that completes the array gets the summary to send: a
    result of its own (no log, no directory: nothing of one task is attached to it)."""
    sched = result.scheduler
    ended = (lambda: slurm_array_ended(sched["array_job_id"], task_ids=array_task_ids(os.environ))) \
        if sched.get("kind") == "slurm" else None
    records = ArraySummary(os.path.join(_state_dir(), "arrays"), sched["array_job_id"],
                           cluster=os.environ.get("SLURM_CLUSTER_NAME")
                           or os.environ.get("SGE_CLUSTER_NAME"))
    summary = records.record(
        sched.get("array_task_id"), result.status, result.classification.cls,
        result.exit_status, host=result.host, duration_s=round(result.end - result.start, 1),
        extra={"log": result.log_path, "metric": _last_metric_text(result.metrics)},
        ended_elsewhere=ended)
    if records.already_sent:
        return ARRAY_SUMMARY_SENT
    if summary is None:
        return None
    worst = summary["worst"][0] if summary["worst"] else {}
    status = worst.get("status") or ("FAILED" if summary.get("missing") else "SUCCESS")
    return make_result(status, "array %s" % sched["array_job_id"], host=result.host,
                       classification=make_verdict(worst.get("class"), array_subject(summary)),
                       tail=summary_lines(summary), scheduler=dict(sched, label=sched["array_job_id"]),
                       array=summary)


def _last_metric_text(metrics):
    for name in (metrics or {}).get("main") or []:
        last = metrics["series"][name].get("last")
        if last:
            return "%s %s" % (name, format_number(last["value"]))
    return None


def slurm_array_ended(array_job_id, run=None, task_ids=None):
    """{task id: state} of the array's tasks Slurm says have ended (sacct), for tasks that
    could not report themselves. When sacct cannot tell (accounting off, as
    AccountingStorageType=accounting_storage/none on small clusters), the controller's queue
    does: each of task_ids squeue no longer lists has ended. {} when neither can tell."""
    run = run or run_command_with_errors  # squeue's words: "Invalid job id specified"
    out = run(["sacct", "-n", "-P", "-X", "-j", str(array_job_id), "-o", "JobID,State,ExitCode"])
    if not out or out[0] != 0 or not out[1].strip():
        return _array_ended_from_queue(array_job_id, run, task_ids)
    ended = {}
    for job_id, state, _ in parse_sacct(out[1]):
        task = job_id.split("_", 1)[1] if "_" in job_id else None
        if task and task.isdigit() and state in SLURM_FINAL_STATES:
            ended[task] = state
    return ended


def _array_ended_from_queue(array_job_id, run, task_ids):
    """{task id: state} of the task_ids that squeue no longer lists (pending, running and
    requeued tasks are listed). An empty list is no answer: the asking task is still in it.
    An array squeue has forgotten ("Invalid job id specified") has ended, all of it."""
    out = run(["squeue", "-h", "-r", "-j", str(array_job_id), "-o", "%i %T"]) if task_ids else None
    if out and out[0] != 0 and "invalid job id" in out[1].lower():
        return dict((task, "ended, no longer known to squeue (no accounting to say how)")
                    for task in task_ids)
    if not out or out[0] != 0:
        return {}
    queued = set()
    for line in out[1].splitlines():
        job = (line.split() or [""])[0]
        if "_" in job:
            queued.add(job.split("_", 1)[1])
    if not queued:
        return {}
    return dict((task, "ended, not in the queue (no accounting to say how)")
                for task in task_ids if task not in queued)


def summary_lines(summary):
    """An array summary as lines a person reads first."""
    def counts(mapping):
        return ", ".join("%s %d" % kv for kv in sorted(mapping.items(), key=lambda kv: -kv[1]))
    lines = ["array %s: %d of %s tasks reported" % (summary["array_job_id"], summary["tasks"],
                                                    summary["expected"] or "?"),
             "by status: %s" % counts(summary["by_status"]),
             "by class: %s" % (counts(summary["by_class"]) or "none")]
    for entry in summary["worst"]:
        lines.append("task %s: %s %s, exit %s, on %s, %s; log %s" % (
            entry.get("task"), entry.get("status"), entry.get("class") or "-", entry.get("exit"),
            entry.get("host"), format_duration(entry.get("duration_s")), entry.get("log")))
    return lines


def _summary_line(result, delivery):
    """What the user sees on stderr: the verdict, the log, where the message went."""
    verdict = result.classification
    cause = verdict.cls or "no failure found"
    if verdict.detail:
        cause += ": %s" % verdict.detail
    if verdict.line:
        cause += " (%s)" % evidence_place(result, verdict.line)
    lines = ["%s %s" % (result.status, cause), "gpualert: log: %s" % result.log_path,
             "gpualert: message: %s" % _delivery_where(delivery)] + ["gpualert: " + c for c in _channel_lines(delivery)]
    return "\n".join(lines)


def _delivery_where(delivery):
    """Where the message went, in words: "sent to ... via ...", or the outbox file."""
    where = delivery.get("detail") or delivery.get("outcome") or "not sent"
    if delivery.get("outbox_path") and delivery["outbox_path"] not in where:
        where = "%s: %s" % (where, delivery["outbox_path"])
    return where


def _channel_lines(delivery):
    return ["channel %s: %s" % (c.get("outcome"), c.get("detail")) for c in delivery.get("channels") or []]


# ---- chat and push channels ----

def configured_channels(cfg):
    """(channels, problems) from cfg notify_url; an unusable URL is a problem, not a crash."""
    channels, problems = [], []
    for url in cfg.get("notify_url") or []:
        try:
            channels.append(parse_channel(url))
        except ConfigError as exc:
            problems.append(str(exc))
    return channels, problems


def notify_channels(result, cfg, deadline, record=None, channels=None, *, dead_entries=()):
    """Tell every channel that wants this status, all at once, before the monotonic deadline.
    Each message is spooled first (a record in the outbox), so a failure or a SIGKILL leaves
    it for `resend`; a service's permanent refusal moves it to dead/. Never raises.
    Returns one dict per channel: channel (masked), service, outcome, detail, path, and
    told: the indexes of dead_entries (DeadNote.entries) the post shows whole."""
    try:
        if channels is None:
            channels = configured_channels(cfg)[0]
        wanted = [c for c in channels if channel_wants(c, result.status, cfg["notify"])]
        if not wanted:
            return []
        summary = brief_for(result)
        if cfg.get("dry_run"):
            return [_channel_outcome(c, "dry-run", "dry run: not posted") for c in wanted]
        txn_ids = [_txn_id(summary) for _ in wanted]
        held = _channel_cap_reason(cfg)
        paths = [_spool_channel(c, summary, cfg, record, t, held=held) for c, t in zip(wanted, txn_ids)]
        if held:  # like the e-mail: kept in the outbox until `resend`
            return [_hold_channel(c, path, held) for c, path in zip(wanted, paths)]
        picture = _channel_picture(result, cfg, wanted)
        posted = deliver_channels(wanted, summary, deadline, record=record, txn_ids=txn_ids,
                                  picture=picture)
        return [dict(_settle_channel(c, res, path), told=_safely(lambda: _shown_entries(c, summary, dead_entries), []))
                for (c, res), path in zip(posted, paths)]
    except Exception as exc:  # noqa: BLE001 - a channel never costs the run or the e-mail
        return [{"channel": "*", "outcome": "failed", "detail": "internal error: %s" % _describe(exc)}]


def _shown_entries(channel, summary, entries):
    """The indexes of a DeadNote's entries the post shows whole: it shows the note (as the
    brief cleans it) through the entry's name, so a name clipped by the service's limit, or
    found only as a piece of another name or of a reason, is not counted (nor one of the
    same name in another place). A post through apprise counts for none: what its target
    shows is unseen (an SMS: 160 characters), so the next message names them again."""
    if not entries or channel.service == "apprise":
        return []
    text = _shown_text(channel, summary)
    return [i for i, (_, through) in enumerate(entries)
            if _clean(through).replace(ZERO_WIDTH_SPACE, "") in text]


def _shown_text(channel, summary):
    """What a post's reader sees of its text: JSON strings or form values, HTML entities
    decoded where the service renders them, without the guards' zero-width spaces."""
    import html
    import json
    from urllib.parse import parse_qsl
    request = request_as_built(channel, summary)
    text, kind = request.body.decode("utf-8", "replace"), request.headers.get("Content-Type", "")
    if kind.startswith("application/json"):
        text = "\n".join(_json_strings(json.loads(text)))
    elif kind.startswith("application/x-www-form-urlencoded"):
        text = "\n".join(value for _, value in parse_qsl(text))
    if channel.service in ENTITY_SERVICES:
        text = html.unescape(text)
    return text.replace(ZERO_WIDTH_SPACE, "")


def _json_strings(value):
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, list):
        return [text for item in value for text in _json_strings(item)]
    return [value] if isinstance(value, str) else []


def _channel_picture(result, cfg, channels):
    """The run's curves as PNG for the services that take files (none with --no-plots, or
    when nothing was drawn). Not spooled: a resent message goes without it."""
    if cfg.get("no_plots") or not any(c.service in PICTURE_SERVICES for c in channels):
        return None
    return _safely(lambda: render_plot(result.metrics, result.gpu)[0], None)


def _channel_cap_reason(cfg):
    """--max-per-hour counts channel messages too (one per run, whatever the channel count),
    so a thousand failing array tasks cannot flood a chat."""
    limiter = _limiter(cfg, "channels")
    if limiter is None or limiter.allow():
        return None
    return "held: more than %d messages this hour (--max-per-hour)" % cfg["max_per_hour"]


def _hold_channel(channel, path, reason):
    if path:
        path = _safely(lambda: release_item(path), path)
    return _channel_outcome(channel, "held" if path else "failed", "%s%s" % (
        reason, ("; saved to %s" % path) if path else "; could not be spooled"), path)


def _channel_outcome(channel, outcome, detail, path=None):
    return {"channel": channel.masked, "service": channel.service, "outcome": outcome,
            "detail": mask_text(detail, channel.secrets), "path": path}


def _spool_channel(channel, summary, cfg, record, txn_id, *, held=None):
    """The record, claimed by us, in the first place of the spool chain; None if none took it.
    held: why it is held back on purpose (the hourly cap): a run's flush leaves it to `resend`."""
    data = dict(channel_record(channel, summary, record, txn_id), held=held)
    return _safely(lambda: spool_channel_record(data, cfg, claimed=True), None)


def _settle_channel(channel, res, path):
    if path is None:
        outcome = "sent" if res.ok else "failed"
        return _channel_outcome(channel, outcome, res.detail + ("" if res.ok else
                                "; could not be spooled (no writable outbox)"))
    state, detail = _settle_record(path, res)
    waiting = os.path.join(os.path.dirname(path), _claim_parts(os.path.basename(path))[0])
    if state == "sent":
        return _channel_outcome(channel, "sent", res.detail)
    if state == "dead":
        return _channel_outcome(channel, "dead", detail, os.path.join(
            os.path.dirname(path), DEAD_DIR, os.path.basename(waiting)))
    return _channel_outcome(channel, "outbox", "not sent (%s); saved to %s" % (res.detail, waiting),
                            waiting)


# ==== Orchestrator: the run ====

LAUNCH_STAND_IN = "held: the job's end was not told yet"
EXIT_STAND_IN = "held: provisional, in case SIGKILL came first"


class RunDelivery(object):
    """How a run's messages are kept, whatever Run decides to send: the thread of
    Message-IDs they share; the stand-in, a message kept claimed in the outbox from before
    the launch (renewed while the child runs, written over at the exit, then by the full
    message in one step, so a SIGKILL never leaves two to send or none); and the messages
    built but not spooled yet, saved if a deadline or a signal cuts their delivery off."""

    def __init__(self, cfg, notes):
        self.cfg, self.notes = cfg, notes  # notes: the run's, for its message
        self.thread_ids = []  # Message-IDs of this run's messages, in order (one thread)
        self.pending = []  # messages built but not spooled yet
        self.spool_lock = threading.Lock()  # one of the two saves a pending message, never both
        self.spooled = threading.Event()  # the run's own message is on disk (or will never be)
        self.provisional = None  # the claimed stand-in's path
        self.provisional_id = None  # its Message-ID, which the full message reuses
        self.apart = None  # the folder of a full message spooled apart from the stand-in
        self.replacing = None  # the message built to replace the stand-in
        self.lease_lock = threading.Lock()  # the renewal never writes over the exit's stand-in
        self.lease_stop = threading.Event()

    def thread(self):
        """The thread's Message-IDs, the stand-in's reserved one included (the next attempt's)."""
        return list(self.thread_ids) + [i for i in (self.provisional_id,) if i and i not in self.thread_ids]

    def spool_stand_in(self, msg, reason):
        """msg as the stand-in, claimed by this process (`resend` sends it only once we are
        gone from this host or our lease lapsed), over the one before. The first reserves
        the Message-ID the full message takes too."""
        self.provisional = self._write_stand_in(msg, reason)

    def _write_stand_in(self, msg, reason):
        """-> the path msg is spooled at, claimed, over the stand-in before (if any)."""
        if self.provisional_id:
            _safely(lambda: set_thread(msg, self.provisional_id, list(self.thread_ids)), None)
        else:
            self.provisional_id = self._reserve_id(msg)
        return spool_message(msg, self.cfg, reason, claimed=True, over=self.provisional)[0]

    def renew(self, make_message):
        """The lease: every LEASE_RENEW_S while the child runs, the stand-in is written over
        with make_message() (the job's latest lines and the time; also a sign of life: see
        _unrenewed). The first renewals come sooner (1, 2, 4 ... s): a job that dies early
        has its lines too."""
        wait = 1.0
        while not self.lease_stop.wait(wait):
            wait = min(2 * wait, LEASE_RENEW_S)
            with self.lease_lock:
                if self.lease_stop.is_set():
                    return
                path = _safely(lambda: self._write_stand_in(make_message(), LAUNCH_STAND_IN), None)
                if path is None and self.provisional:  # not rewritten (a full disk, a quota):
                    renew_claim(self.provisional)  # renewed all the same, or a resend thinks us dead
                elif path != self.provisional:  # taken over: a resend thought us dead; the
                    self.provisional = path     # message written apart supersedes it
                    self.apart = os.path.dirname(path)

    def stop_renewing(self):
        with self.lease_lock:  # a renewal under way ends before the exit's stand-in is written
            self.lease_stop.set()

    def drop_stand_in(self):
        path, self.provisional = self.provisional, None
        if path:
            finish_item(path)
        if path and self.apart and not os.path.lexists(path):  # its mark is not needed now
            base = _claim_parts(os.path.basename(path))[0]
            for mark in _superseded_marks(base, [self.apart]):
                _remove_quietly(mark)

    def save_pending(self, reason):
        """The deadline or a signal cut a delivery off before its message was spooled."""
        got = self.spool_lock.acquire(timeout=1.0)
        try:
            for msg in list(self.pending):  # never lose the message
                saved = _outbox_result(msg, self.cfg, reason, "outbox").get("outbox_path")
                if saved and msg is self.replacing:  # an early notice's is no stand-in's substitute
                    _safely(self.drop_stand_in, None)
            del self.pending[:]
        finally:
            if got:
                self.spool_lock.release()

    def dead_letters(self):
        """The dead letters the next message names, as a DeadNote."""
        if self.cfg["dry_run"]:
            return NO_DEAD_NOTE
        dead, untold = _safely(lambda: untold_dead_letters(self.cfg), None) or ([], 0)
        return dead_letter_note(dead, untold) if dead else NO_DEAD_NOTE

    def deliver(self, result, deadline, capped=True, replaces=False, dead=None):
        """The one place a message of this run leaves: built, then delivered (or held, or
        saved) by `deadline`, a time.monotonic() value; capped=False: past the hourly cap
        (an array's one summary); replaces: the message takes the stand-in's place on disk
        in one step (never two spooled messages for one run); dead: dead_letters() of a caller
        that tells them itself (chat posts too), else they are named and told here.
        -> (delivery, manifest)."""
        over, own = self.provisional if replaces else None, dead is None
        dead = self.dead_letters() if own else dead
        result = _with_note(result, dead.text)
        msg, manifest = build_message(result, self.cfg)
        _safely(lambda: self._thread(msg, self.provisional_id if over else None), None)
        self.pending.append(msg)  # save_pending saves it if the deadline cuts this thread off
        if over:
            self.replacing = msg
        delivery = deliver_capped(msg, self.cfg, deadline, capped=capped, over=over,
                                  on_spooled=lambda path: self._on_spooled(msg, path, bool(over)))
        self._on_spooled(msg, None)
        if own:
            tell_shown(dead, delivery)
        return delivery, manifest

    def _on_spooled(self, msg, path, replaces=False):
        """Called with the spool lock free: from now on the message is safe on disk.
        replaces: msg is the one that replaces the stand-in; only then does the stand-in go
        (an early notice spooled after the exit says nothing of how the job ended)."""
        with self.spool_lock:
            if msg in self.pending:
                self.pending.remove(msg)
            if path and replaces and path == self.provisional:  # written over it: the message now
                self.provisional = None
            elif path and replaces and self.provisional:  # apart from it: marked there (spool_message)
                self.apart = os.path.dirname(path)
        if path and replaces:
            _safely(self.drop_stand_in, None)
        self.spooled.set()

    def _reserve_id(self, msg):
        """The stand-in's Message-ID, which the full message that replaces it takes too (so
        receivers keep one if both ever arrive); not in the thread until that one is sent.
        -> the Message-ID, or None."""
        message_id = new_message_id()
        try:
            set_thread(msg, message_id, list(self.thread_ids))
        except Exception as exc:  # the stand-in keeps the Message-ID it was built with
            self.notes.append("the stand-in message kept its own Message-ID: %s" % _describe(exc))
            return None
        return message_id

    def _thread(self, msg, reuse=None):
        """Give msg the next Message-ID of this run's thread, referring to the earlier ones.
        Early notices are built in their own threads: list.append is atomic, and each
        message refers to those appended before its own. reuse: the stand-in's reserved
        Message-ID, for the full message that replaces it."""
        message_id = reuse or new_message_id()
        self.thread_ids.append(message_id)
        earlier = self.thread_ids[:self.thread_ids.index(message_id)]
        set_thread(msg, message_id, earlier)


class JobEnd(object):
    """What a run asks its scheduler about the job's end (nothing outside a batch job): the
    time limit and the SIGTERM-to-SIGKILL delay, read as the child starts, and why the job
    ends, asked while the scheduler still knows (a SIGTERM; SGE's notices)."""

    def __init__(self, scheduler, start):
        self.scheduler, self.start = scheduler, start
        self.time_limit = self.kill_wait = None  # Background reads of the two
        self.reason = None  # Background: (reason, evidence) of a SIGTERM or a notice
        self.said = []  # the scheduler's own answer about the SIGTERM, when it has come
        self.term_at = None  # when a scheduler's SIGTERM came

    def read_limits(self):
        """Learned as the child starts, used if a SIGTERM comes: never delays the child."""
        if self.scheduler:
            self.time_limit = Background(lambda: read_time_limit(self.scheduler,
                                                                 pauses=LIMIT_READ_PAUSES_S))
            self.kill_wait = Background(lambda: read_kill_wait(self.scheduler))

    def kill_wait_s(self):
        """The scheduler's SIGTERM-to-SIGKILL delay, if this is a batch job (else None)."""
        if not self.kill_wait:
            return None
        return self.kill_wait.result(0) or KILL_WAIT_UNKNOWN_S

    def on_sigterm(self):
        if self.scheduler and self.reason is None:
            now = time.time()
            self.reason = Background(lambda: query_end_reason(
                self.scheduler, self.start, now, time_limit=self.known_limit(), said=self.said))
            self.term_at = now

    def runs_on(self, final):
        """After slurmstepd's SIGTERM: does Slurm run the job on (JobState=RUNNING, seen for
        --signal=B:TERM@N and scancel --batch on 22.05; a limit, a scancel or a preemption
        shows COMPLETING)? None while its answer may still come; final: no more waiting."""
        if self.said:
            reason, evidence = self.said[0]
            return reason is None and (evidence or "").startswith("scontrol: JobState=RUNNING ")
        return None if self.reason and self.reason.running() and not final else False

    def on_notice(self, name):
        """SGE's SIGUSR1 (s_rt) or SIGUSR2 (-notify: a SIGKILL comes). -> the Background ask."""
        limit, now = self.time_limit, time.time()
        asked = Background(lambda: scheduler_named(self.scheduler.get("kind")).why_signalled(
            self.scheduler, name, self.start, now,
            time_limit=limit.result(CMD_TIMEOUT_S) if limit else None))
        if name == "SIGUSR2" or self.reason is None:
            self.reason = asked  # a later SIGUSR2 (the kill) outranks an s_rt
        return asked

    def answer(self, wait):
        """The scheduler's answer about the SIGTERM. A controller too busy to answer in time
        must not turn a time-limit kill into a plain interruption: what the job's known
        limit says decides then."""
        if not self.reason:
            return None
        answer = self.reason.result(wait)
        if answer is None and self.term_at is not None:
            answer = _reason_from_limit(self.start, self.term_at, self.known_limit())
        return answer

    def known_limit(self):
        """The time limit read at the start, or the end time the scheduler's environment
        gave, when that read has not come back (a busy controller)."""
        limit = self.time_limit.result(0) if self.time_limit else None
        return limit or {"end_time": self.scheduler.get("end_time"), "source": "environment"}

    def scheduler_with_limit(self):
        """The scheduler's facts plus the time limit read at the start (Slurm before 23.02
        sets no SLURM_JOB_END_TIME), so the message can say how much of it the job used."""
        limit = self.time_limit.result(0) if self.time_limit else None
        if not self.scheduler or not limit:
            return self.scheduler
        known = {key: limit[key] for key in ("end_time", "limit_s", "unlimited")
                 if limit.get(key) and not self.scheduler.get(key)}
        return dict(self.scheduler, **known) if known else self.scheduler


class RunAttempts(object):
    """--requeue, for one run: this job's earlier attempts (their run records, read before
    the child), this one's number, the chain of earlier job ids (a resubmission's), and
    what to do when it ends (decide)."""

    def __init__(self, cfg, scheduler, run_dir, rank, start=None):
        self.cfg, self.scheduler, self.rank, self.start, env = cfg, scheduler, rank, start, os.environ
        # ":" since sbatch --export splits at commas; "," as written before, and as a user may
        self.chain = [j for j in re.split(r"[,:]", env.get(REQUEUED_FROM_ENV) or "") if j]
        label, adapter = scheduler.get("label"), scheduler_named(scheduler.get("kind"))
        restarts = adapter.restarts(env)
        self.restarts = int(restarts) if restarts.isdigit() else 0
        self.records = _safely(lambda: read_attempts(
            os.path.dirname(run_dir), scheduler, self.chain, self.restarts, own_dir=run_dir,
            exact=adapter.restarts_exact, before=start), []) if label else []
        own = len([r for r in self.records if (r.get("scheduler") or {}).get("label") == label])
        # The records may be on another node's disk, or pruned: the scheduler's restart count
        # and the chain's length count the attempts, whichever is higher; those no record
        # shows spend every budget (requeue_budget), so no budget is forgotten with them.
        earlier = max(own, self.restarts) + max(len(self.records) - own, len(self.chain))
        self.unrecorded = earlier - len(self.records)
        self.number = earlier + 1
        # checked now, as the file is at this attempt's start: an earlier attempt's record
        # says what it was; another user may have swapped it during the requeue's hold
        self.resume = resume_checkpoint(self.records)
        refused = self.resume and _safely(lambda: resume_refusal(
            self.resume, self.resume.get("host") == _hostname(short=True)),
            "%s cannot be checked" % self.resume["path"])
        self.resume_note = refused and "GPUALERT_RESUME left empty: %s" % refused
        self.resume = None if refused else self.resume
        self.resume_path = None  # what the job is given: the checkpoint, or our pin of it
        if self.resume:
            self.resume_path, why = _safely(lambda: pin_checkpoint(self.resume, run_dir),
                                            (None, "cannot be pinned"))
            if why:
                self.resume_note = "GPUALERT_RESUME left empty: %s %s" % (self.resume["path"], why)
                self.resume = None

    def thread(self):
        """The Message-IDs of the job's thread so far: the newest record lists them all."""
        return ((self.records[-1].get("requeue") or {}).get("thread") or []) if self.records else []

    def child_env(self):
        """GPUALERT_ATTEMPT and GPUALERT_RESUME for the child."""
        return {ATTEMPT_ENV: str(self.number), RESUME_ENV: self.resume_path or ""}

    def decide(self, result, node, run_dir, log, said=None):
        """From the verdict and the budgets -> (result with its requeue record, the requeue to
        do last or None). A hardware fault's resubmission is done now (the message names the
        new job); a requeue is checked now and returned to be done last. Only rank 0 acts.
        said: the scheduler's (reason, evidence) for a SIGTERM, or None."""
        if self.resume and self.resume_path != self.resume["path"]:  # our pin: the job has ended, and
            _safely(lambda: os.unlink(self.resume_path), None)  # the link would keep its blocks
        cls = None if result.status == "SUCCESS" else result.classification.cls
        earlier, resume = [attempt_summary(r) for r in self.records], self.resume
        req = {"attempt": self.number, "asked": list(self.cfg["requeue"]), "earlier": earlier,
               "node": node, "chain": self.chain, "restarts": self.restarts, "start": self.start,
               "said": (said or (None,))[0], "gpu_fault": gpu_fault_evidence(result.gpu),
               "resume": resume["path"] if resume else None, "exclude": sorted(set(
                   n for a in earlier for n in a.get("exclude") or ()))}
        decision = decide_requeue(cls, self.cfg["requeue"], earlier, self.cfg["max_requeues"],
                                  self.scheduler.get("kind", ""), self.unrecorded)
        if decision is not None and decision.action and self.rank not in (None, 0):
            decision = decision._replace(action=None, reason="not requeued by rank %d: rank 0 "
                                         "requeues the job" % self.rank)
        last = None
        if decision is not None:
            # an earlier attempt's checkpoint refused now would be refused then too
            ckpt = resume_checkpoint([{"metrics": {"checkpoint": resume}}, {"metrics": result.metrics}])
            req.update(decision._asdict(), next_resume=ckpt["path"] if ckpt else None)
            last = decision.action and scheduler_named(self.scheduler["kind"]).plan_requeue(
                req, self.scheduler, self.cfg["dry_run"], run_dir)
            log.record("requeue", [("decision", requeue_detail(req, cls))], sync=False)
        return result._replace(requeue=req), last or None


class Run(object):
    """One wrapped command, from its log header to its message; cmd_run is Run(...).execute().

    Before the child: the run directory and the log's header. While it runs: the output
    pump, the GPU sampler, early notices, and the scheduler asked why on a SIGTERM. After
    it exits, within one deadline: gather() reads the Outcome once; the pure core turns it
    into facts, a verdict and the RunResult; notify() applies the policy (rank, array,
    --notify) and deliver(result, deadline) is the one place a message leaves.
    """

    def __init__(self, argv, cfg, problems=(), notify_explicit=False):
        self.argv, self.cfg, self.start = list(argv), cfg, time.time()
        self.notify_explicit = notify_explicit  # --notify was given (not the default)
        self.host, self.cwd, self.notes = _hostname(short=True), _getcwd(), list(problems)
        self.scheduler = _safely(lambda: detect_scheduler(os.environ), {})
        self.rank = _safely(lambda: job_rank(os.environ), None)
        self.shown_argv = self.argv if cfg.get("no_redact") else redact_argv(self.argv)
        self.name = job_name_for(self.shown_argv, cfg["name"], self.scheduler)
        self.run_dir_fd = None  # the run directory as made (open_own_dir): written through
        self.log, self.run_dir = self._open_log()
        self.header_lines, self.mem_before = 0, {}
        self.output_mark = None  # the job output file before the child wrote (job_output_mark)
        self.pump = self.sampler = None
        self.follower = None  # the evidence grep that reads the log while the child runs
        self.job_end = JobEnd(self.scheduler, self.start)  # what the scheduler says of the end
        self.early = []    # Background notices (stalled, time limit near)
        self.early_sent = []  # (status, time, detail) of each early notice, for the final one
        self.interactive = _isatty(0)  # a person at a terminal started it
        self.delivery = RunDelivery(cfg, self.notes)  # the run's messages: their thread, stand-ins, spooling
        self.deadline = None  # time.monotonic() by which delivery is done; set at the exit
        self.attempts = None  # --requeue: this job's earlier attempts (RunAttempts)
        if cfg.get("requeue"):
            self.attempts = RunAttempts(cfg, self.scheduler, self.run_dir, self.rank, self.start)
            if self.attempts.resume_note:
                self.notes.append(self.attempts.resume_note)
                _warn("warning: " + self.attempts.resume_note)
            self.delivery.thread_ids[:] = self.attempts.thread()  # one thread across attempts
        self.requeue_last = None  # set by conclude when the job is to be requeued: done last
        self.final = self.final_record = None  # conclude's result, (delivery, manifest)

    def execute(self):
        """Run the command; -> its exit status, whatever happens to the notification."""
        attempt = self.attempts and (self.attempts.number, self.attempts.child_env()[RESUME_ENV])
        self.log.record("run started (gpualert %s)" % __version__, header_fields(
            self.shown_argv, host=self.host, cwd=self.cwd, start=self.start,
            scheduler=self.scheduler, rank=self.rank, attempt=attempt))
        self.header_lines = self.log.lines
        self.output_mark = _safely(job_output_mark, None)
        self.mem_before = _safely(read_cgroup_memory, {})
        self.mem_before["own"] = own_cgroup_kind(self.mem_before.get("path"), os.environ)
        self.mem_before["rlimit_as"] = _safely(address_space_limit, None)
        # Spool before the launch: whenever we die from now on (kill -9, the OOM killer, the
        # node), a stand-in that says so waits in the outbox; renewed while we live.
        if self._stand_in_wanted():
            _safely(lambda: self.delivery.spool_stand_in(self._silent_message(), LAUNCH_STAND_IN), None)
        child = self._run_child()
        end = time.time()
        self.delivery.stop_renewing()
        # Not fsync'd yet: the written bytes survive our own death; the cause record syncs both.
        # Over the launch stand-in: from here on a SIGKILL leaves at least the exit's facts.
        _safely(lambda: self._save_provisional(child, end), None)
        self.log.record("command ended", footer_fields(child, self.start, end, self.log),
                        sync=False)
        bound = self._post_exit_bound(child)
        self.deadline = time.monotonic() + bound
        self.delivery.spooled.clear()  # an early notice may have set it
        worker = Background(lambda: self.conclude(child, end), report=not self.cfg["quiet"])
        stop = _wait_interruptible(worker, bound)
        if stop:  # Ctrl-C or SIGTERM after the exit: stop delivering, the message is spooled
            self.delivery.spooled.wait(min(1.0, self.left()) * 0.8)
            self.delivery.save_pending("gpualert was interrupted (%s) while delivering" % stop)
            _warn("%s: delivery stopped; the message waits in the outbox (gpualert resend)" % stop)
            if self.requeue_last:  # the message is saved: the requeue it announces still goes
                _safely(self.requeue_last, None, report=True)
            flush_terminal(0.5)  # the lines above go through the terminal copy: let them out
            return exit_status_for(child.exit_code, child.exec_error)
        if worker.running() and not self.cfg["quiet"]:
            _warn("notification did not finish within %.0fs; the run itself is unaffected" % bound)
        for notice in self.early:  # a stalled/warning notice still on its way
            notice.result(self.left())
        self.delivery.save_pending("notification ran out of time")
        if self.requeue_last:  # before the drain: Slurm's SIGKILL may follow its SIGTERM soon
            _safely(self.requeue_last, None, report=True)
        self._finish_output()
        self.log.close()
        return exit_status_for(child.exit_code, child.exec_error)

    def left(self):
        """Seconds to the deadline (0 once passed)."""
        return max(0.0, self.deadline - time.monotonic())

    # ---- before and while the child runs ----

    def _open_log(self):
        """The run directory and log, under --log-dir, else the temp dir: it must exist first."""
        for log_dir in (self.cfg["log_dir"], None):
            try:
                log_dir = log_dir or temp_root()  # private, never a name someone else made
                run_dir = make_run_dir(log_dir, self.name, self.host, self.scheduler,
                                       rank=self.rank, start=self.start)
                self.run_dir_fd = open_own_dir(run_dir)
                name = "output.log" if self.rank is None else "output.rank%d.log" % self.rank
                return RunLog(os.path.join(run_dir, name), dir_fd=self.run_dir_fd), run_dir
            except (OSError, GpuAlertError) as exc:
                self.notes.append("cannot write the log under %s: %s" % (log_dir, exc))
        raise GpuAlertError("no writable place for the log (%s)" % "; ".join(self.notes[-2:]))

    def _run_child(self):
        signal.pthread_sigmask(signal.SIG_BLOCK, _signal_set())
        merged = same_output(1, 2)  # one file: one pipe, so the log is in 2>&1 order
        tty = controlling_terminal()
        own_group, hand_over = child_group_plan(tty)
        give_tty = tty if hand_over else None
        try:
            out_r, out_w = _pipe()
            err_r, err_w = (out_r, out_w) if merged else _pipe()
            env = child_env(os.environ, not self.cfg["no_env_tweaks"])
            before = _safely(own_rss_kib, None)
            env.update(self.attempts.child_env() if self.attempts else {})
            pid, exec_error = spawn_child(self.argv, env, out_w, err_w, tty=give_tty,
                                          own_group=own_group)
            # the fork's RSS lies between the readings either side of it
            fork_kib = max(before or 0, _safely(own_rss_kib, None) or 0)
            if not exec_error:
                _safely(lambda: note_child(self.run_dir, pid, self.run_dir_fd), None)
        except OSError as exc:  # out of file descriptors or processes: the command never ran
            return ChildExit(None, {}, (exc.errno, "gpualert could not start it: %s"
                                        % exc.strerror), False, [], 0.0)
        reads = [out_r] if merged else [out_r, err_r]
        for fd in set((out_w, err_w) + (tuple(reads) if exec_error else ())):
            os.close(fd)
        if exec_error:
            return ChildExit(None, {}, exec_error, False, [], 0.0)
        self.sampler = _safely(lambda: GpuSampler(interval=self.cfg["gpu_interval"]).start(), None)
        self.job_end.read_limits()
        own = (self.mem_before or {}).get("own")
        tree = None if own else _safely(lambda: TreeSampler(pid).start(), None)
        self.follower = _safely(lambda: EvidenceFollower(self.log.path, self.header_lines), None)
        copies = terminal_copies(merged)
        self.pump = ChildPump(pid, dict((fd, copies[n]) for n, fd in enumerate(reads, 1)), self.log,
                              self.cfg, kill_wait=self.job_end.kill_wait_s, on_stall=self._on_stall,
                              on_signal=self._on_signal, stops=stop_signal_names(self.scheduler),
                              runs_on=self.job_end.runs_on,
                              tty=tty if own_group and os.getpgrp() == os.getpid() else None,
                              mirror_stops=own_group and tty is not None and os.getsid(0) != os.getpid())
        exited = threading.Event()
        mail = self.cfg["notify"] != "never" or bool(self.cfg.get("notify_url"))
        Background(lambda: warm_up(exited, mail))
        if self.delivery.provisional:  # started here, as the threads above, with the signals blocked
            Background(lambda: self.delivery.renew(self._silent_message))
        self.pump.run(self.cfg["timeout"])
        exited.set()
        self.pump.drain(self._drain_s())  # leftover processes' output: while the message goes
        rusage = dict(self.pump.rusage, **(_safely(tree.stop, {}) if tree else {}))
        if fork_kib:
            rusage["fork_rss_kib"] = fork_kib
        if os.path.basename(self.argv[0]) in REMOTE_LAUNCHERS:
            rusage["launcher"] = os.path.basename(self.argv[0])
        hang = self.pump.hang and dict(self.pump.hang, line=self.header_lines + self.pump.hang["line"])
        return ChildExit(self.pump.exit_code, rusage, None, self.pump.timed_out,
                         self.pump.signals, self.pump.stall_s, hang, self.pump.relay.warnings)

    def _drain_s(self):
        return DRAIN_S if self.cfg.get("drain") is None else float(self.cfg["drain"])

    def _finish_output(self):
        """Our outputs get their grace, leftover processes their drain; then we exit."""
        if self.pump is not None:
            self.pump.finish_terminal()
            self.pump.finish_drain(self._drain_s())
        flush_terminal(0.5)

    def _on_stall(self, silent_s):
        self._notify_early("STALLED", "no output for %s" % format_duration(silent_s))

    def _on_signal(self, name, info):
        """Ask the scheduler why while it still knows; warn early on --signal=B:USR1@120."""
        if name in scheduler_named(self.scheduler.get("kind")).notices:
            return self._on_notice(name)
        if name == "SIGTERM":
            self.job_end.on_sigterm()
        if name in ("SIGUSR1", "SIGUSR2") and self.scheduler:
            self._notify_early("WARNING", "time limit approaching (%s)" % name)

    def _on_notice(self, name):
        """SGE's SIGUSR1 is s_rt (warn now; TIMEOUT if the job then ends); its SIGUSR2 is
        -notify's notice of a SIGKILL (h_rt or qdel): the child is stopped in time and the
        message goes before the kill (the pump treats it as a stop signal)."""
        asked = self.job_end.on_notice(name)
        if name == "SIGUSR1":
            def detail():  # a WARNING only for the run-time limit, not a suspend notice
                reason, evidence = asked.result(2 * CMD_TIMEOUT_S + 1.0) or (None, None)
                return evidence if reason == "walltime" else None
            self._notify_early("WARNING", detail)

    def _notify_early(self, status, detail):
        """A notice while the child still runs (stalled, time limit near); never blocks it.
        detail: the text, or a function that returns it (called off the pump's thread;
        None: no notice after all)."""
        def send():
            text = detail() if callable(detail) else detail
            if text is None:
                return
            self.early_sent.append((status, time.time(), text))
            result = make_result(
                status, self.name, argv=self.argv, host=self.host, cwd=self.cwd, start=self.start,
                classification=make_verdict("walltime" if status == "WARNING" else None, text),
                log_path=self.log.path, run_dir=self.run_dir, scheduler=self.scheduler,
                tail=tail_lines(self.pump.tail) if self.pump else [], notes=[text],
                metrics=self._warning_metrics() if status == "WARNING" else None)
            deadline = time.monotonic() + _mail_timeout(self.cfg)
            posts = _start_channels(result, self.cfg, deadline)
            delivery = {"outcome": "skipped", "detail": "--notify never"}
            if self.cfg["notify"] != "never":
                delivery, _ = self.delivery.deliver(result, deadline)
            delivery = _with_channels(delivery, posts, deadline)
            if not self.cfg["quiet"]:
                _warn("%s notice: %s" % (status, delivery.get("detail") or delivery.get("outcome")))
                for line in _channel_lines(delivery):
                    _warn(line)
        if self.cfg["notify"] != "never" or self.cfg.get("notify_url"):
            self.early.append(Background(send))

    def _warning_metrics(self):
        """For a time-limit warning: the log's progress and speed so far, the newest
        checkpoint, and whether the run will finish in the time left (finish_text)."""
        now = time.time()
        metrics = _safely(lambda: run_metrics(self.log.path, self.cwd, self.start, self.run_dir,
                                              self.cfg.get("metric")), {}) or {}
        metrics.pop("job_output", None)
        limit = _safely(self.job_end.known_limit, {}) or {}
        end = limit.get("end_time") or (self.start + limit["limit_s"] if limit.get("limit_s") else None)
        finish = _safely(lambda: finish_text(metrics, end - now if end else None, now), None)
        if finish:
            metrics["finish"] = finish
        return metrics

    # ---- after the child exited ----

    def _post_exit_bound(self, child):
        """How long classification and delivery may take; before a scheduler's SIGKILL."""
        bound = _mail_timeout(self.cfg) + 10.0
        stops = stop_signal_names(self.scheduler)
        term = [at for name, at, _ in child.signals if name in stops]
        if term and self.scheduler:  # a plain `kill` outside a batch job has no SIGKILL to beat
            left = self.job_end.kill_wait_s() - KILL_MARGIN_S - (time.time() - term[0])
            bound = max(2.0, min(bound, left))
        return bound

    def conclude(self, child, end):
        """Classify, record, notify: after the exit status is fixed, by self.deadline."""
        self._follow_run_dir()
        outcome = self.gather(child, end)
        verdict = classify_text(outcome.tail.decode("utf-8", "replace"), facts_for(outcome))
        result = result_for(outcome, verdict)
        for note in self._thread_notes(child, result):
            result = _with_note(result, note)
        result = _safely(lambda: self._requeue(result), result, report=True)
        self.log.record("cause", _cause_fields(verdict), sync=False)
        result = _with_note(result, _write_run_json(self._with_thread(result), None, None, sync=False,
                                                     dir_fd=self.run_dir_fd))
        self.final = result
        delivery, manifest = self.notify(result)
        # The log's fsync after the message is safe, not before: writing back a GiB of output
        # takes about half a second, and reads of the log (the metrics) wait for it meanwhile.
        self.log.sync()
        if delivery.get("outcome") != "outbox" or delivery.get("outbox_path"):
            self.delivery.drop_stand_in()  # the full message is out or safe: the stand-in goes
        _write_run_json(self._with_thread(result), delivery, manifest, dir_fd=self.run_dir_fd)
        self.final_record = (delivery, manifest)
        if not self.cfg["quiet"]:
            _warn(_summary_line(result, delivery))
        self.delivery.spooled.set()
        posted = any(c.get("outcome") == "sent" for c in delivery.get("channels") or ())
        if delivery.get("outcome") == "sent" or posted:
            _flush_outbox(self.cfg, self.left() - KILL_MARGIN_S, mail=delivery.get("outcome") == "sent",
                          channels=posted)

    # ---- --requeue: the attempts before this one, and what to do after it ----

    def _node(self):
        """This node as the scheduler names it (for an exclusion): Slurm's node name, SGE's
        HOSTNAME, else the short host name."""
        return scheduler_named(self.scheduler.get("kind")).node(self.scheduler, os.environ) or self.host

    def _requeue(self, result):
        """--requeue: decide (RunAttempts.decide); a requeue to do is done last (requeue_last),
        once the message is spooled and the run record written."""
        if self.attempts is None:
            return result
        result, last = self.attempts.decide(result, self._node(), self.run_dir, self.log,
                                            self.job_end.answer(0))
        if last:  # "done" in the message: it is the last thing, and a refusal is told after
            self.requeue_last = lambda: self._requeue_now(last)
        return result

    def _requeue_now(self, requeue):
        """The very last thing: requeue() (in the job it requeues, the batch step ends at
        once) -> None or (state, why): "refused", or "uncertain" (no answer: it may still be
        done, and the next attempt's budget counts it). Either goes to the run record and
        the log, and a short message follows in the thread."""
        got = requeue()
        if got is None:
            return
        state, why = got
        result = self.final._replace(requeue=dict(self.final.requeue, state=state, reason=(
            "not requeued: " if state == "refused" else "requeue uncertain: ") + why))
        result = _with_note(result, "the requeue announced before was %s: %s" % (state, why))
        delivery, manifest = self.final_record or (None, None)
        _write_run_json(self._with_thread(result), delivery, manifest)
        self.log.record("requeue", [(state, why)])
        _warn("requeue %s: %s" % (state, why))
        if self.cfg["notify"] != "never" and not self.cfg["dry_run"]:
            self.delivery.deliver(result, time.monotonic() + min(_mail_timeout(self.cfg), REQUEUE_TELL_S))

    def _with_thread(self, result):
        """The result whose requeue record names this run's thread, for the next attempt."""
        if not result.requeue:
            return result
        return result._replace(requeue=dict(result.requeue, thread=self.delivery.thread()))

    def _follow_run_dir(self):
        """The run directory renamed under us (a link or another folder at its path): the log
        and run.json stay in ours (written through its descriptor); the message names where
        it is now and says what happened; nothing is written at the old path."""
        moved = self.run_dir_fd is not None and run_dir_moved(self.run_dir, self.run_dir_fd)
        if not moved:
            return
        note = ("the run directory %s was replaced while the job ran (renamed, something else "
                "put at its path); nothing was written there: the log and run.json are in %s"
                % (self.run_dir, moved))
        self.notes.append(note)
        _warn("warning: " + note)
        if moved != "?" and os.path.isabs(moved):
            self.log.path = os.path.join(moved, os.path.basename(self.log.path))
            self.run_dir = moved

    def _thread_notes(self, child, result):
        """The early notices this run sent, and what the job did after a warning signal."""
        notes = ["earlier notice: %s at %s (%s)" % (status, time.strftime("%H:%M:%S", time.localtime(at)),
                                                    detail) for status, at, detail in self.early_sent]
        notes.append(warning_signal_note(child.signals, (result.metrics or {}).get("checkpoint"),
                                         (child.warnings or {}).get("withheld")))
        return [n for n in notes if n]

    def gather(self, child, end):
        """The run's Outcome, read once: the cgroup after, the scheduler's answer about a
        SIGTERM (waited for within the deadline), the GPU summary, the log's metrics."""
        scan = self.follower or _safely(lambda: EvidenceScan(self.log.path, self.header_lines), None)
        mem_after = _safely(read_cgroup_memory, {})
        reason = self.job_end.answer(min(END_REASON_WAIT_S, max(0.5, self.left() / 2.0)))
        gpu = _safely(self.sampler.stop, {}) if self.sampler else {}
        metrics = _safely(lambda: run_metrics(self.log.path, self.cwd, self.start, self.run_dir,
                                              self.cfg.get("metric"), signals=child.signals), {})
        evidence = _safely(lambda: scan.result(min(EVIDENCE_SCAN_S, self.left() / 3.0)), []) if scan else []
        lines = self.header_lines + (self.pump.output.lines if self.pump else 0)
        mapped = _safely(lambda: job_output_map(self.output_mark, self.header_lines, lines), None)
        if mapped and metrics.get("job_output"):
            metrics["job_output_map"] = mapped
        return self._outcome(child, end, mem_after=mem_after, gpu=gpu, end_reason=reason,
                             metrics=metrics, evidence=evidence)

    def _outcome(self, child, end, *, mem_after=None, gpu=None, end_reason=None, metrics=None,
                 evidence=()):
        pump, notes = self.pump, list(self.notes)
        notes += [note for note in (self.log.error, self.log.sync_error) if note]
        if (metrics or {}).get("checkpoint_untold") and not metrics.get("checkpoint"):
            notes.append("no checkpoint offered: the log names no saves, and another run beside this "
                         "one in %s may have written the checkpoint files found there" % self.cwd)
        if child.stall_s:
            notes.append("the command was silent for %s at most (--stall %s)"
                         % (format_duration(child.stall_s), format_duration(self.cfg["stall"])))
        return Outcome(
            argv=tuple(self.shown_argv), name=self.name, host=self.host, cwd=self.cwd,
            scheduler=self.job_end.scheduler_with_limit(), rank=self.rank, log_path=self.log.path,
            run_dir=self.run_dir, start=self.start, end=end, child=child,
            tail=pump.tail_bytes() if pump else b"",
            total_lines=self.header_lines + (pump.output.lines if pump else 0),
            mem_before=self.mem_before or {}, mem_after=mem_after or {}, gpu=gpu or {},
            end_reason=end_reason, metrics=metrics, notes=tuple(notes), evidence=tuple(evidence))

    def _stand_in_wanted(self):
        """Would this run send a message of its own (not --notify never, a dry run or a rank
        that does not notify)? An array's summarized task has one too: if its wrapper dies it
        never records, the summary never completes, and the stand-in is all that tells."""
        cfg = self.cfg
        return not (cfg["notify"] == "never" or cfg["dry_run"] or
                    not _safely(lambda: should_notify_rank(os.environ, cfg["all_ranks"]), True))

    def _silent_message(self):
        """The stand-in before the exit: it says the job's end was never told."""
        alive = time.time()
        note = ("no end was reported: gpualert or its node died while the job ran (last sign "
                "of life at %s; it renews this message every %ds while it lives)"
                % (time.strftime("%Y-%m-%d %H:%M:%S %Z", time.localtime(alive)), LEASE_RENEW_S))
        silent = "went silent at %s" % time.strftime("%H:%M", time.localtime(alive))
        result = make_result(
            "SILENT", self.name, argv=self.shown_argv, host=self.host, cwd=self.cwd,
            start=self.start, classification=make_verdict(None, silent),
            log_path=self.log.path, run_dir=self.run_dir, scheduler=self.scheduler,
            tail=tail_lines(self.pump.tail) if self.pump else [], notes=[note])
        return _assemble(result, self.cfg, [], [], html=False)

    def _save_provisional(self, child, end):
        """Over the launch stand-in, from the child's exit on: a SIGKILL (the scheduler's
        after its SIGTERM, an OOM killer, a node going down) may come before the full message
        is ready. A plain message from the process facts alone is written over it at once,
        still claimed by this process so nobody sends it while we live; the full message is
        written over that in one step (spool_over), so a SIGKILL never leaves two to send.
        If we die first, `resend` finds the dead owner's claim and sends it. A run that
        sends nothing for this end (--notify failure and a success) drops the launch one."""
        cfg = self.cfg
        if not self._stand_in_wanted():
            return
        outcome = self._outcome(child, end)
        result = _with_note(result_for(outcome, classify_text("", facts_for(outcome))),
                            "provisional message, saved when the command ended: gpualert was "
                            "stopped before it could send the full one")
        if not should_notify(result.status, cfg["notify"]):
            self.delivery.drop_stand_in()
            return
        self.delivery.spool_stand_in(_assemble(result, cfg, [], [], html=False), EXIT_STAND_IN)

    def notify(self, result):
        """The policy: which rank sends, one summary per array, --notify. -> (delivery, manifest)."""
        cfg = self.cfg
        if not _safely(lambda: should_notify_rank(os.environ, cfg["all_ranks"]), True):
            return {"outcome": "skipped", "detail": "rank %s: only rank 0 notifies" % self.rank}, []
        if own_ctrl_c(result.status, self.pump.signals if self.pump else (), self.interactive) \
                and not (self.notify_explicit and cfg["notify"] == "always"):
            return {"outcome": "skipped", "detail": "your own Ctrl-C at a terminal "
                    "(--notify always sends a message for it too)"}, []
        capped = True
        if cfg["array_summary"] and result.scheduler.get("array_job_id"):
            summary = _array_report(result)
            if summary == ARRAY_SUMMARY_SENT:  # nothing else will tell of it: its own message
                summary = None
                result = result._replace(notes=list(result.notes) + [
                    "the array summary had already been sent when this task reported"])
            elif summary is not None:  # this task completed the array: one summary for all,
                if cfg["array_summary"] == "each" and should_notify(result.status, cfg["notify"]):
                    self.delivery.deliver(result, self.deadline - 1.0)
                result, capped = summary, False  # never held by the hourly cap
            elif cfg["array_summary"] != "each":
                return {"outcome": "summarized", "detail": "recorded for the array summary"}, []
        deadline = self.deadline - 1.0
        dead = self.delivery.dead_letters()  # named by the e-mail and the chat posts alike
        result = _with_note(result, dead.text)
        posts = _start_channels(result, cfg, deadline, dead.entries)  # at once with the e-mail
        delivery, manifest = {"outcome": "skipped", "detail": "--notify %s" % cfg["notify"]}, []
        if should_notify(result.status, cfg["notify"]):
            delivery, manifest = self.delivery.deliver(result, deadline, capped=capped, replaces=True,
                                                       dead=dead)
        delivery = _with_channels(delivery, posts, deadline)
        tell_shown(dead, delivery)
        return delivery, manifest



#: Modules the message's making imports; warm_up() loads them while the child runs.
WARM_MODULES = ("json", "gzip", "html", "mimetypes", "email.message", "email.policy",
                "email.utils", "email.generator")


def warm_up(exited, mail=True):
    """What the work after the exit would otherwise load after it: the compiled rule table
    and (mail: a message will be made) the modules of the message; about 0.1 s of CPU spent
    while the child runs instead of on the way to the message. Not for a command that ends
    within WARM_DELAY_S, and no further once it has ended (exited: a threading.Event): the
    work after the exit loads only what it needs, and this thread would compete with it."""
    if exited.wait(WARM_DELAY_S):
        return
    compiled_rules()
    for name in WARM_MODULES if mail else ():
        if exited.is_set():
            return
        __import__(name)


def _getcwd():
    try:
        return os.getcwd()
    except OSError as exc:  # the directory was removed under us; the child inherits it anyway
        return "(unavailable: %s)" % exc.strerror


def _pipe():
    """A pipe with a large buffer, so a fast writer is not woken for every 64 KiB."""
    r, w = os.pipe()
    try:
        _set_pipe_size(w, 1 << 20)
    except (OSError, ImportError):
        pass  # the default 64 KiB pipe works, only with more wake-ups
    return r, w


def _flush_outbox(cfg, seconds, *, mail=True, channels=False):
    """The transport works now (the e-mail, a chat channel): deliver what earlier runs could
    not, within `seconds` and RUN_FLUSH_MAX_S, and at most RUN_FLUSH_MAX_ITEMS of each: a full
    outbox never delays a job's end. Messages held back on purpose wait for `resend`."""
    kinds = [kind for kind, wanted in ((MailResend, mail), (ChannelResend, channels)) if wanted]
    seconds = min(seconds, RUN_FLUSH_MAX_S)
    if not kinds or seconds < 0.5:
        return
    report = resend(cfg, kinds, max_s=seconds, skip_held=True, max_items=RUN_FLUSH_MAX_ITEMS)
    sent = sum(report[kind.kind]["sent"] for kind in kinds)
    if sent and not cfg["quiet"]:
        _warn("also delivered %d earlier message(s) from the outbox" % sent)


def _wait_interruptible(worker, seconds):
    """Wait for `worker` up to `seconds`; a SIGINT/SIGTERM/SIGHUP/SIGQUIT (blocked in this
    thread since the child started) ends the wait at once. -> the signal's name, or None."""
    end = time.monotonic() + seconds
    wait = getattr(signal, "sigtimedwait", None)
    if wait is None:  # not on macOS: wait as before
        worker.result(seconds)
        return None
    stops = dict((getattr(signal, n), n) for n in STOP_SIGNALS)
    while worker.running() and time.monotonic() < end:
        try:
            # A short slice: the worker's end does not interrupt sigtimedwait, and every
            # slice the wrapper waits past it is added to the job's end.
            info = wait(_signal_set(), min(WORKER_POLL_S, max(0.0, end - time.monotonic())))
        except (OSError, InterruptedError):
            info = None
        if info is not None and info.si_signo in stops:
            return stops[info.si_signo]
    return None


def _cause_fields(verdict):
    if verdict.cls is None:
        return [("class", "none (success)")]
    return [("class", verdict.cls), ("detail", verdict.detail), ("line", verdict.line),
            ("evidence", verdict.evidence), ("hint", verdict.remediation)]


def result_record(result, delivery=None, manifest=None):
    """Everything the notification says, as the JSON-ready dict of run.json."""
    record = dict(result._asdict())
    record["classification"] = dict(result.classification._asdict())
    record["class"] = result.classification.cls
    record["command"] = quote_argv(result.argv)
    record["start_iso"] = iso_time(result.start)
    record["end_iso"] = iso_time(result.end) if result.end else None
    record["duration_s"] = round(result.end - result.start, 3) if result.end else None
    record["manifest"] = manifest or []
    record["delivery"] = delivery or {"outcome": "pending"}
    record["gpualert_version"] = __version__
    if record["digest"] is None:  # a run's record has none
        del record["digest"]
    return record


def _write_run_json(result, delivery, manifest, sync=True, dir_fd=None):
    """run.json beside the log, written atomically (scripts and `resend` read it); through
    dir_fd (open_own_dir) when given, so never into a directory swapped in at its path.
    -> None, or a note saying why it could not be written (a full log disk must not cost
    the notification)."""
    import json
    path = "run.json" if dir_fd is not None else os.path.join(result.run_dir, "run.json")
    tmp = path + ".tmp"
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0)
    try:
        with os.fdopen(os.open(tmp, flags, 0o600, dir_fd=dir_fd), "w") as handle:
            json.dump(json_ready(result_record(result, delivery, manifest)), handle, indent=2,
                      default=str)
            handle.write("\n")
            handle.flush()
            if sync:
                os.fsync(handle.fileno())
        os.replace(tmp, path, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    except OSError as exc:
        _safely(lambda: os.remove(tmp, dir_fd=dir_fd), None)
        return "run.json could not be written (%s)" % exc.strerror
    return None


def _start_channels(result, cfg, deadline, dead_entries=()):
    """notify_channels in a daemon thread, by the monotonic deadline (at most the e-mail's
    --smtp-timeout from now); None when no channel is configured."""
    if not cfg.get("notify_url"):
        return None
    deadline = min(deadline, time.monotonic() + _mail_timeout(cfg))
    record = _safely(lambda: result_record(result), None)
    return Background(lambda: notify_channels(result, cfg, deadline, record, dead_entries=dead_entries))


def _with_channels(delivery, posts, deadline):
    """The delivery dict with the channels' outcomes (their records are spooled already)."""
    if posts is None:
        return delivery
    outcomes = posts.result(max(0.0, deadline - time.monotonic()) + 0.5)
    delivery = dict(delivery)
    delivery["channels"] = outcomes if outcomes is not None else [
        {"channel": "*", "outcome": "outbox", "detail": "still posting at the deadline; "
                                                        "spooled for resend"}]
    return delivery


# ==== Orchestrator: watch ====

# ---- watch: follow submitted jobs, through the adapters that can poll them ----

def watch_kind(scheduler="auto", which=None, run=None, environ=None):
    """Which scheduler `watch` asks ("auto": each that can poll, in SCHEDULERS order). A
    scheduler here whose jobs watch cannot follow (PBS: its qstat shares Grid Engine's
    name, not its options) is a UsageError when nothing else could answer, rather than
    polls that misread it; beside Slurm it is left out."""
    import shutil
    which = which or shutil.which
    here = [s for s in SCHEDULERS if s.here(which, run, environ)]
    able = [s for s in here if s.poll and scheduler in ("auto", s.kind)]
    unable = [s for s in here if not s.poll]
    if unable and not able and scheduler in ("auto", "sge"):
        raise UsageError("watch: the %s here is %s's%s: watching %s jobs is not supported" % (
            unable[0].tool, unable[0].name, ", not Grid Engine's" * (unable[0].tool == "qstat"),
            unable[0].name))
    return able[0].kind if unable and len(able) == 1 and scheduler == "auto" else scheduler


def poll_job(job_id, run=None, notes=None, scheduler="auto", memory=None):
    """One look at a job. -> list of job-info dicts (an array id gives one per task), or []
    when no scheduler knows the job, or None when every source failed (retry later; the
    reasons are appended to `notes`). scheduler: a kind, or "auto": each adapter that can
    poll, in order, the later ones where their command is installed (watch_kind has ruled
    out a qstat that is not Grid Engine's); the first that knows the job is kept in memory
    (a dict per job) for the next polls. Where both run, Slurm's and SGE's job ids overlap:
    say which with --scheduler."""
    import shutil
    memory, notes = {} if memory is None else memory, [] if notes is None else notes
    kind = memory.get("kind") or scheduler
    if kind != "auto":
        return scheduler_named(kind).poll(job_id, run, memory, notes)
    tried = []
    for n, adapter in enumerate(s for s in SCHEDULERS if s.poll):
        if n and (run is not None or not shutil.which(adapter.tool)):
            continue
        asked = []
        found = adapter.poll(job_id, run, memory, asked)
        if found:
            memory["kind"] = adapter.kind
            notes += [] if tried else asked
            return found
        tried.append((found, asked))
    if tried[0][0] is None and any(found == [] for found, _ in tried):
        return []  # another answered (it does not know the job) where the first did not
    notes += [n for _, asked in tried for n in asked]
    return tried[0][0]


def job_is_unknown(job_id, scheduler="auto", run=None, which=None):
    """Does every scheduler here say, in its own words, that it has no such job (a typo)?
    -> their words (str), or None: known, or some scheduler could not say (down, hung,
    accounting unreadable): then watch polls as usual and its bounded give-up applies.
    Slurm: scontrol "Invalid job id" and no sacct record (scontrol forgets ended jobs after
    MinJobAge). SGE: qstat -j "do not exist" and qacct -j "not found"."""
    import shutil
    run, which = run or run_command_with_errors, which or shutil.which
    words = []
    for adapter in SCHEDULERS:
        if adapter.says_unknown and scheduler in ("auto", adapter.kind) and which(adapter.tool):
            said = adapter.says_unknown(str(job_id), run)
            if not said:
                return None
            words.append(said)
    return "; ".join(words) or None


def watch_jobs(job_ids, *, run=None, sleep=time.sleep, clock=time.time, interval=WATCH_INTERVAL_S,
               max_interval=WATCH_MAX_INTERVAL_S, unknown_retries=WATCH_UNKNOWN_RETRIES,
               max_wait=None, on_done=None, give_up_s=WATCH_GIVE_UP_S, warn=None,
               scheduler="auto"):
    """Poll until every job has ended. -> list of job-info dicts (one per job, one per
    array task), in the order they ended; on_done(info) is called as each ends. A job no
    source knows for `unknown_retries` polls in a row ends as state "UNKNOWN". When the
    scheduler fails to answer, warn(line) says why (default: stderr), the wait doubles up
    to max_interval, and after give_up_s of failing polls the jobs left end as UNKNOWN."""
    warn = warn or (lambda line: _warn("watch: " + line))
    pending = [str(j) for j in job_ids]
    unknown = dict((j, 0) for j in pending)
    memory = dict((j, {}) for j in pending)  # per job: which scheduler, SGE's submission record
    results, wait, began, failing_since = [], max(0.1, float(interval)), clock(), None
    while pending:
        trouble = []
        for job_id in list(pending):
            # A broken seam or parser: said in trouble, and the job is polled again later.
            infos = _safely(lambda: poll_job(job_id, run, trouble, scheduler, memory[job_id]), None,
                            report=lambda exc: trouble.append("job %s: %s: %s" % (job_id, type(exc).__name__, exc)))
            if infos is None:
                continue
            if not infos:
                unknown[job_id] += 1
                if unknown[job_id] < unknown_retries:
                    continue
                infos = [_unknown_info(job_id, unknown[job_id])]
            unknown[job_id] = 0
            if all(i["done"] or i["state"] == "UNKNOWN" for i in infos):
                pending.remove(job_id)
                for info in infos:
                    results.append(info)
                    if on_done is not None:
                        _safely(lambda: on_done(info), None, report=_watch_warning)
        if not pending:
            break
        if not trouble:
            failing_since = None
        elif failing_since is None:
            failing_since = clock()
        why = _give_up_reason(clock(), began, failing_since, max_wait, give_up_s)
        if why:
            if trouble:
                warn("giving up: %s (last: %s)" % (why, "; ".join(trouble)))
            results += [_unknown_info(job_id, None, why) for job_id in pending]
            break
        wait = min(max_interval, wait * 2) if trouble else max(0.1, float(interval))
        if trouble and give_up_s is not None:  # the last try comes at the bound, not after
            wait = min(wait, max(0.1, failing_since + give_up_s - clock()))
        if trouble:
            warn("cannot poll: %s; trying again in %s" % ("; ".join(trouble), format_duration(wait)))
        sleep(wait)
    return results


def _give_up_reason(now, began, failing_since, max_wait, give_up_s):
    if max_wait is not None and now - began >= max_wait:
        return "still running after %.0fs" % max_wait
    if failing_since is not None and give_up_s is not None and now - failing_since >= give_up_s:
        return "the scheduler did not answer for %s" % format_duration(now - failing_since)
    return None


def _watch_warning(exc):
    _warn("watch: %s: %s" % (type(exc).__name__, exc))


def _unknown_info(job_id, polls, note=None):
    info = _job_info(job_id, "", None, {}, None)
    info.update(state="UNKNOWN", done=False,
                note=note or "no scheduler command knows this job (%s polls)" % polls)
    info["facts"] = {"scheduler_state": "UNKNOWN"}
    return info


def classify_watched(info):
    """Classify the job's stderr, then its stdout (when separate): the first finding wins.
    With no readable log, the scheduler's facts alone."""
    first = None
    for path in (info.get("stderr"), info.get("stdout")):
        if not path or path == info.get("log_path") or not os.path.isfile(path):
            continue
        verdict = classify_log(path, dict(info["facts"]))
        if first is None:
            first, info["log_path"] = verdict, path
        if verdict is not None and verdict.cls is not None:
            info["log_path"] = path
            return verdict
    return first if first is not None else classify_text("", dict(info["facts"]))


class Watch(object):
    """`watch`: follow submitted Slurm or SGE jobs until each ends, classify its log and send the
    message the wrapper would have sent. Owns the polling and one report per ended job."""

    def __init__(self, job_ids, cfg, *, interval=None, max_wait=None, give_up_s=None,
                 scheduler=None):
        self.job_ids, self.cfg, self.max_wait = list(job_ids), cfg, max_wait
        self.interval = max(1.0, float(interval or WATCH_INTERVAL_S))
        self.give_up_s = WATCH_GIVE_UP_S if give_up_s is None else give_up_s
        self.scheduler = scheduler or "auto"

    def run(self):
        """-> 0 when every job's end was seen, 1 when some job stayed unknown (or the
        scheduler stopped answering for give_up_s). A job id no scheduler here knows is a
        usage error, raised before anything is polled or sent."""
        self.scheduler = watch_kind(self.scheduler)
        unknown = [(j, job_is_unknown(j, self.scheduler)) for j in self.job_ids]
        unknown = ["%s (%s)" % (j, why) for j, why in unknown if why]
        if unknown:
            raise UsageError("watch: no such job: %s" % ", ".join(unknown))
        results = watch_jobs(self.job_ids, interval=self.interval,
                             max_interval=max(self.interval, WATCH_MAX_INTERVAL_S),
                             max_wait=self.max_wait, on_done=self.report,
                             give_up_s=self.give_up_s, scheduler=self.scheduler)
        return 0 if all(r["state"] != "UNKNOWN" for r in results) else 1

    def report(self, info):
        """One ended job: classify, notify, and one line on stdout."""
        verdict = classify_watched(info) if info["state"] != "UNKNOWN" else None
        delivery = self.notify(info, verdict)
        if not self.cfg.get("quiet"):
            lines = ["%s %s exit=%s class=%s log=%s message=%s" % (
                info["label"], info["state"], info["facts"].get("exit_code"),
                getattr(verdict, "cls", None), info.get("log_path") or info.get("stdout"),
                _delivery_where(delivery or {}))]
            lines += ["  " + c for c in _channel_lines(delivery or {})]
            sys.stdout.write("\n".join(lines) + "\n")
            sys.stdout.flush()
        return delivery

    def notify(self, info, verdict):
        """The message for a submitted job that ended, exactly like the wrapper's."""
        cfg = self.cfg
        result = watched_result(info, verdict, cfg["log_dir"])
        result = _with_note(result, _write_run_json(result, None, None))
        deadline = time.monotonic() + _mail_timeout(cfg)
        posts = _start_channels(result, cfg, deadline)
        delivery, manifest = {"outcome": "skipped", "detail": "--notify %s" % cfg["notify"]}, []
        if should_notify(result.status, cfg["notify"]):
            msg, manifest = build_message(result, cfg)
            delivery = deliver_capped(msg, cfg, deadline)
        delivery = _with_channels(delivery, posts, deadline)
        _write_run_json(result, delivery, manifest)
        return delivery


def watched_result(info, verdict, log_dir):
    """The RunResult of a job `watch` saw end (its run directory is made under log_dir)."""
    verdict = verdict or make_verdict("unknown", "the scheduler no longer knows the job")
    code = (info.get("facts") or {}).get("exit_code")
    end = info.get("end_time") or time.time()
    host = _hostname(short=True)
    label = info.get("label") or info.get("job_id")
    name = info.get("name") or "job %s" % label
    run_dir = make_run_dir(log_dir, "watch-" + name, host, {"dir_tag": str(label)}, start=end)
    log_path = info.get("log_path") or info.get("stdout") or ""
    kind = info.get("kind") or "slurm"
    adapter = scheduler_named(kind)
    notes = [adapter.state_note % info.get("state") + " (seen by gpualert watch on %s)" % host]
    evidence = (info.get("facts") or {}).get("scheduler_evidence")
    notes += [n for n in (evidence if adapter.evidence_note else None, info.get("note")) if n]
    try:
        tail = tail_lines(read_tail(log_path, 256 * 1024)[0]) if log_path else []
    except OSError as exc:
        tail = []
        notes.append("cannot read the job's log %s: %s" % (log_path, exc.strerror or exc))
    argv = [info["command"]] if info.get("command") else [
        "%s job %s" % (adapter.submit_tool, label)]  # no script known (--wrap, qacct only)
    return make_result(
        status_for(code, verdict.cls), name, argv=argv,
        host=host, cwd=os.path.dirname(log_path), start=info.get("start_time") or end, end=end,
        exit_code=code, classification=verdict, log_path=log_path, run_dir=run_dir,
        tail=tail,
        scheduler={"kind": kind, "job_id": info.get("job_id"), "label": label,
                   "state": info.get("state")},
        notes=notes)


# ==== CLI: configuration ====

def convert_option(kind, raw):
    """One option value from text; raises ConfigError naming the problem."""
    if kind == "size":
        return parse_size(raw, SIZE_MAX_BYTES)
    if kind == "duration":
        return parse_duration(raw)
    if kind == "seconds":
        return parse_seconds(raw)
    if kind.startswith("choice:"):
        choices = kind[len("choice:"):].split("|")
        if raw not in choices:
            raise ConfigError("%r is not one of %s" % (raw, ", ".join(choices)))
        return raw
    if kind.startswith("flag:") and str(raw).lower() in kind[len("flag:"):].split("|"):
        return str(raw).lower()  # a flag with named values: --array-summary=each
    if kind.startswith("flag"):
        if str(raw).lower() in ("1", "true", "yes", "on", ""):
            return True
        if str(raw).lower() in ("0", "false", "no", "off"):
            return False
        raise ConfigError("%r is not a yes/no value" % raw)
    if kind in ("int", "count"):  # count: a number of things, never below 0
        try:
            value = int(raw)
        except ValueError:
            raise ConfigError("%r is not a whole number" % raw)
        if kind == "count" and value < 0:
            raise ConfigError("%r is below 0" % raw)
        return value
    if kind == "path":  # absolute: a run's records name its directory for any later cwd
        raw = os.path.expanduser(os.path.expandvars(raw))
        return os.path.abspath(raw) if raw else raw
    if kind == "list":
        return [item.strip() for item in str(raw).split(",") if item.strip()]
    if kind == "causes":
        return parse_requeue_causes(raw)
    if kind == "urls":  # comma- or whitespace-separated (a comma inside a URL: write %2C)
        return [item for item in re.split(r"[,\s]+", str(raw)) if item]
    return raw


def _kinds():
    kinds = dict((key, kind) for _, key, kind, _, _ in RUN_OPTIONS)
    kinds["smtp_password"] = "str"
    return kinds


CONFIG_MAX_BYTES = 1 << 20  # a config file is a few hundred bytes; more is not one


class NotAConfigFile(ConfigError):
    """A FIFO, device or directory given as the config: ignored (a Notice), never read."""


def read_config_file(path):
    """The [gpualert] section of an INI file -> dict of raw strings; ConfigError if broken,
    NotAConfigFile if it is no regular file (opened without blocking, never read: a FIFO
    or /dev/zero must not hang the start or fill the memory); refused (ConfigError) if
    someone else could have written it, whichever path named it (_config_refusal)."""
    import configparser
    parser = configparser.ConfigParser(interpolation=None)
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        st = os.fstat(fd)
        mode = st.st_mode
        if not stat.S_ISREG(mode):
            os.close(fd)
            raise NotAConfigFile("config file %s is %s, not a file: ignored" % (
                path, "a directory" if stat.S_ISDIR(mode) else
                "a FIFO" if stat.S_ISFIFO(mode) else "a device or socket"))
        refusal = _config_refusal(st) or _acl_refusal(fd)
        if refusal:
            os.close(fd)
            raise ConfigError("config file %s %s" % (path, refusal))
        with os.fdopen(fd, "rb") as handle:
            data = handle.read(CONFIG_MAX_BYTES + 1)
        if len(data) > CONFIG_MAX_BYTES:
            raise ConfigError("config file %s: over %d bytes" % (path, CONFIG_MAX_BYTES))
        parser.read_string(data.decode("utf-8"), source=path)
    except (OSError, configparser.Error, UnicodeDecodeError) as exc:
        raise ConfigError("config file %s: %s" % (path, str(exc).splitlines()[0]))
    if not parser.has_section("gpualert"):
        raise ConfigError("config file %s has no [gpualert] section" % path)
    return dict(parser.items("gpualert"))


def _config_refusal(st):
    """Why a config file may not be obeyed, or None: it names where the mail and the log go,
    so whoever can write it could redirect them. Ours or root's, and writable by us alone
    (group-writable only through our own private group, as umask 002 makes files)."""
    if st.st_uid not in (os.geteuid(), 0):
        return "is owned by uid %d, not by you: refused" % st.st_uid
    if st.st_mode & 0o002 or (st.st_mode & 0o020 and not _private_group(st.st_gid)):
        return "is writable by %s: refused (chmod go-w it)" % (
            "others" if st.st_mode & 0o002 else "group %d" % st.st_gid)
    return None


def _acl_refusal(fd):
    """Why a file's POSIX ACL lets someone else write it, or None: a named user (not us) or
    group entry with write, which its mask lets through. The mode's group bits then show
    only the mask, which a private group's check would let pass."""
    try:
        acl = os.getxattr(fd, "system.posix_acl_access")
    except (OSError, AttributeError):  # none, or no xattrs here (then no ACL either)
        return None
    import struct
    entries = [struct.unpack_from("<HHI", acl, at) for at in range(4, len(acl) - 7, 8)]
    mask = [perm for tag, perm, _ in entries if tag == 0x10]  # ACL_MASK
    writers = [(tag, who) for tag, perm, who in entries if perm & 2 and (tag == 8 or (  # ACL_GROUP
        tag == 2 and who != os.geteuid()))]  # ACL_USER
    if writers and (not mask or mask[0] & 2):
        return "has an ACL that lets %s %d write it: refused (setfacl -b it)" % (
            "user" if writers[0][0] == 2 else "group", writers[0][1])
    return None


def _private_group(gid):
    """Is gid a user private group: our primary group, named as we are, no other member?"""
    try:
        import grp
        import pwd
        me, group = pwd.getpwuid(os.geteuid()), grp.getgrgid(gid)
    except (ImportError, KeyError):
        return False
    return gid == me.pw_gid and group.gr_name == me.pw_name and set(group.gr_mem) <= {me.pw_name}


def load_config(flags, environ):
    """defaults < config file < GPUALERT_* < flags -> (cfg, sources, problems); cfg is
    read-only from here on (a run that needs another value makes its own copy).

    Flags were converted (and usage-checked) by the parser. A problem in the file or the
    environment never stops the run: it is reported, the default stays, and a broken file
    holds the message in the outbox (it may have named the real relay); one bad value
    keeps the value before it (a Notice) and holds nothing.
    """
    cfg, problems = default_config(), []
    sources = dict((key, "default") for key in cfg)
    explicit = flags.get("config") or environ.get(ENV_PREFIX + "CONFIG")
    home = environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    path = convert_option("path", explicit) if explicit else os.path.join(home, "gpualert", "config.ini")
    cfg["config"] = path
    if explicit or os.path.exists(path):
        _merge_file(cfg, sources, problems, path)
    _merge_env(cfg, sources, problems, environ)
    for key, value in flags.items():
        cfg[key], sources[key] = value, "flag"
    broken = [p for p in problems if not isinstance(p, Notice)]
    if broken:
        cfg["config_broken"] = "; ".join(broken)
    bad = configured_channels(cfg)[1]
    if bad:  # the other channels and the e-mail still go; this one is named at start
        cfg["notify_url"] = [u for u in cfg["notify_url"] if _safely(lambda: parse_channel(u), None)]
        problems = problems + ["%s (ignored)" % p for p in bad]
    return types.MappingProxyType(cfg), sources, problems


class Notice(str):
    """A configuration problem worth a warning that holds no mail (an unknown key)."""


def check_settings(cfg, warn):
    """Addresses, the relay and the sendmail path, checked before the child starts: each
    problem is one warning naming the setting and what is used instead, never an error.
    -> cfg, or a read-only copy without the bad values."""
    fixed, say = dict(cfg), warn or (lambda line: None)
    # A bare name is a local user's mailbox; one that is no user here came from a comma
    # inside an address (--to 'me@uni,edu' split into me@uni and edu).
    good = [a for a in cfg.get("to") or [] if _address_ok(a) and ("@" in a or _local_user(a))]
    for bad in [a for a in cfg.get("to") or [] if a not in good]:
        say("warning: --to %r is not an e-mail address%s; ignored (sending to %s)"
            % (bad, "" if "@" in bad else " nor a user on this host (a comma inside an address?)",
               ", ".join(good) or "the local user"))
    fixed["to"] = good
    if cfg.get("from_addr") and not _address_ok(cfg["from_addr"]):
        say("warning: --from %r is not an e-mail address; using gpualert <USER@HOST>" % cfg["from_addr"])
        fixed["from_addr"] = None
    if cfg.get("smtp") and not _relay_ok(cfg["smtp"]):
        fixed["smtp"] = None
        say("warning: --smtp %r is not HOST[:PORT]; using %s instead" % (
            cfg["smtp"], _choose_transport(fixed)[1]))
    asked = cfg.get("sendmail")
    if asked and asked != "none" and not (os.path.isfile(asked) and os.access(asked, os.X_OK)):
        fixed["sendmail"] = None
        say("warning: --sendmail %r is not an executable file; using %s instead" % (
            asked, _choose_transport(fixed)[1]))
    return types.MappingProxyType(fixed) if fixed != dict(cfg) else cfg


def _local_user(name):
    try:
        import pwd
        pwd.getpwnam(str(name).strip())
        return True
    except (ImportError, KeyError):
        return False


def _address_ok(addr):
    """A reasonable addr-spec (local@domain.part, or a bare local user name like root)."""
    from email.utils import parseaddr
    spec = parseaddr(str(addr))[1] or ""
    if "@" not in spec:
        return bool(re.match(r"^[A-Za-z0-9._+-]+$", spec)) and spec == str(addr).strip()
    local, _, domain = spec.rpartition("@")
    label = r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
    return bool(re.match(r"^[A-Za-z0-9!#$%&'*+/=?^_`{|}~.-]+$", local)) and "@" not in local \
        and not local.startswith(".") and ".." not in local \
        and bool(re.match(r"^%s(?:\.%s)*$" % (label, label), domain))


def _relay_ok(spec):
    try:
        host, port = _parse_hostport(spec)
    except ValueError:
        return False
    return bool(host.strip()) and 0 < port < 65536


def _merge_file(cfg, sources, problems, path):
    kinds = _kinds()
    try:
        raw = read_config_file(path)
    except NotAConfigFile as exc:  # cannot have named a relay: holds no mail
        problems.append(Notice(str(exc)))
        return
    except ConfigError as exc:
        problems.append(str(exc))
        return
    shared = _safely(lambda: os.stat(path).st_mode & 0o077, 0)
    if raw.get("smtp_password") and shared:
        _warn("warning: %s holds a password and is readable by others (chmod 600 it)" % path)
    elif raw.get("notify_url") and shared:
        _warn("warning: %s holds channel URLs (their tokens) and is readable by others "
              "(chmod 600 it)" % path)
    for key, value in raw.items():
        if key not in kinds:  # a typo, or a newer version's key: ignored, never holds mail
            import difflib
            near = difflib.get_close_matches(key, list(kinds), n=1, cutoff=0.6)
            problems.append(Notice("config file %s: unknown key %r ignored%s" % (
                path, key, " (did you mean %r?)" % near[0] if near else "")))
            continue
        _set_converted((cfg, sources, problems), key, kinds[key], value, "file %s" % path)


def _merge_env(cfg, sources, problems, environ):
    for key, kind in _kinds().items():
        name = ENV_PREFIX + ("FROM" if key == "from_addr" else key.upper())
        # set but empty (`GPUALERT_TIMEOUT=` in a job script) means unset, as shells use it
        if environ.get(name, "").strip() and key != "config":
            _set_converted((cfg, sources, problems), key, kind, environ[name], "env " + name)


def _set_converted(layers, key, kind, raw, source):
    """One value into the configuration being built; layers is (cfg, sources, problems)."""
    cfg, sources, problems = layers
    try:
        value = convert_option(kind, raw)
    except ConfigError as exc:  # the value before it stays: the message still goes out
        if kind == "causes" or key == "max_requeues":  # but a requeue asked for in vain (or a
            # budget not the one written) would be found out too late, as --max-requeues -1 is
            raise UsageError("%s: %s: %s" % (source, key, exc))
        problems.append(Notice("%s: %s: %s; using %s" % (
            source, key, exc, "the default" if cfg.get(key) in (None, [], "") else repr(cfg[key]))))
        return
    cfg[key], sources[key] = value, source


# ==== CLI: commands ====

def _format_plain(path, verdict):
    if verdict.cls is None:
        return "%s: success (no failure evidence)" % path
    where = " line %d" % verdict.line if verdict.line else ""
    out = "%s: %s [%s]%s: %s" % (path, verdict.cls, verdict.rule, where, verdict.detail)
    if verdict.evidence:
        out += "\n    > " + verdict.evidence
    return out + "\n    hint: " + verdict.remediation


def cmd_classify(args):
    """`gpualert classify LOG...`: classify finished logs offline. 0 if all read, else 2."""
    import json
    facts = {}
    if getattr(args, "exit_code", None) is not None:
        facts["exit_code"] = args.exit_code
    status = 0
    for path in args.logs:
        try:
            c = _classify_any(path, dict(facts))
        except (OSError, IOError) as exc:
            why = getattr(exc, "strerror", None) or exc
            sys.stderr.write("gpualert: error: cannot read %s: %s\n" % (path, why))
            status = 2
            continue
        if getattr(args, "json", False):
            print(json.dumps({"path": path, "class": c.cls, "detail": c.detail, "line": c.line,
                              "evidence": c.evidence, "remediation": c.remediation, "rank": c.rank}))
        else:
            print(_format_plain(path, c))
    return status


def _classify_any(path, facts):
    """classify_log, also for `-` (stdin), /dev/stdin and pipes (<(...)): classify_log reads
    the tail by seeking, so a stream is first copied to a private temporary file, in pieces."""
    import shutil
    import tempfile
    if path != "-" and stat.S_ISREG(os.stat(path).st_mode):
        return classify_log(path, facts)
    with tempfile.NamedTemporaryFile(prefix="gpualert-classify-") as copy:  # 0600
        if path == "-":
            shutil.copyfileobj(sys.stdin.buffer, copy, 1 << 20)
        else:
            with open(path, "rb") as stream:
                shutil.copyfileobj(stream, copy, 1 << 20)
        copy.flush()
        return classify_log(copy.name, facts)


def cmd_resend(args, cfg):
    """`gpualert resend`: flush the outbox (e-mail and channel messages). 0 if nothing is
    left, else 1 (dead letters in outbox/dead/ do not count)."""
    report = resend(cfg)
    counts, posts = report[MailResend.kind], report[ChannelResend.kind]
    if cfg["quiet"]:  # a cron line: the exit status says it; dead letters go in the next message
        return 0 if counts["remaining"] == 0 and posts["remaining"] == 0 else 1
    for place, n in report["found"].items():
        print("gpualert: resend: found %d in %s" % (n, place))
    print("gpualert: resend: %d sent, %d failed, %d refused for good (dead/), %d remaining" % (
        counts["sent"], counts["failed"], counts["dead"], counts["remaining"]))
    if posts["sent"] or posts["failed"] or posts["dead"] or posts["remaining"]:
        print("gpualert: resend: channels: %d sent, %d failed, %d dead, %d remaining" % (
            posts["sent"], posts["failed"], posts["dead"], posts["remaining"]))
    for label, tally in (("", counts), ("channels: ", posts)):
        if tally.get("held"):
            print("gpualert: resend: %s%d held by a live owner (a running job's stand-in, a "
                  "message being sent): sent here once seen unrenewed for %s" % (
                      label, tally["held"], format_duration(CLAIM_LEASE_S)))
    details = report["details"]
    for line in details[:20] + (["... and %d more" % (len(details) - 20)] if len(details) > 20 else []):
        sys.stderr.write("gpualert:   %s\n" % line)
    return 0 if counts["remaining"] == 0 and posts["remaining"] == 0 else 1


def _test_result(cfg):
    now = time.time()
    kind, where = _choose_transport(cfg)
    return make_result("TEST", "test-email", argv=["gpualert", "test-email"], host=_hostname(),
                       cwd=_getcwd(), start=now, end=now, exit_code=0,
                       tail=["This is a test message from gpualert."],
                       notes=["transport: %s %s" % (kind, where)])


def cmd_test_email(args, cfg):
    """`gpualert test-email`: send a small message; 0 if sent (or dry run), else 1."""
    msg, _ = build_message(_test_result(cfg), cfg)
    out = deliver(msg, cfg, spool=False)  # a stale TEST mail delivered later helps nobody
    print("gpualert: test email %s via %s: %s" % (out["outcome"], out["transport"],
                                                   out["detail"]))
    return 0 if out["outcome"] in ("sent", "dry-run") else 1


def cmd_test_notify(args, cfg):
    """`gpualert test-notify [URL...]`: post a test message to the given channels, else to
    every configured one; one line each. 0 if all took it, 1 otherwise. Nothing is spooled."""
    urls = list(getattr(args, "urls", None) or [])
    channels = [parse_channel(url) for url in urls] if urls else configured_channels(cfg)[0]
    if not channels:
        _warn("error: no channel to test (give URLs, or set --notify-url, notify_url or "
              "GPUALERT_NOTIFY_URL)")
        return 1
    result = _test_result(cfg)._replace(name="test-notify", argv=["gpualert", "test-notify"])
    deadline = time.monotonic() + _mail_timeout(cfg)
    failed = 0
    for channel, res in deliver_channels(channels, brief_for(result), deadline,
                                         record=result_record(result)):
        failed += 0 if res.ok else 1
        print("gpualert: test-notify: %s: %s" % ("sent" if res.ok else (
            "REFUSED" if res.permanent else "FAILED"), res.detail))
    return 0 if failed == 0 else 1


def cmd_watch(args, cfg):
    """`gpualert watch JOBID...`: follow Slurm or SGE jobs until they end; classify each job's
    log and notify. 0 when every job's end was seen, 1 when some job stayed unknown."""
    return Watch(args.job_ids, cfg, interval=getattr(args, "interval", None),
                 max_wait=getattr(args, "max_wait", None), give_up_s=getattr(args, "give_up", None),
                 scheduler=getattr(args, "scheduler", None)).run()


def _known_runs(cfg, now):
    """read_runs for `runs` and `digest`, with one warning for runs dated in the future. The
    default runs directory is made private first (it holds every run's log)."""
    if cfg["log_dir"] == default_config()["log_dir"] and os.path.isdir(cfg["log_dir"]):
        _safely(lambda: private_dir(cfg["log_dir"], create=False), None)
    runs = read_runs(cfg["log_dir"], _warn)
    ahead = future_runs(runs, now)
    if ahead:
        _warn("warning: %d run record%s dated in the future (a wrong clock on %s), e.g. %s: "
              "in no --since window" % (len(ahead), "" if len(ahead) == 1 else "s",
                                         ", ".join(sorted(set(r["host"] or "?" for r in ahead))[:5]),
                                         ahead[0]["run_dir"]))
    return runs


def cmd_runs(args, cfg):
    """`gpualert runs`: the runs under --log-dir, newest first, one line (or --json object)
    each; a record that cannot be read is one warning. 0, also when none matched."""
    import json
    now = time.time()
    runs = select_runs(_known_runs(cfg, now), now, args.since, failed=args.failed,
                       node=args.node, job=args.job)
    if runs and not args.json:
        print(RUNS_HEADER)
    for run in runs:
        if args.json:
            print(json.dumps(json_ready(dict((k, run[k]) for k in RUN_FIELDS)), sort_keys=False))
        else:
            print(run_line(run))
    if not runs and not cfg["quiet"]:
        _warn("runs: none%s under %s" % (
            " in the last %s" % format_duration(args.since) if args.since is not None else "",
            cfg["log_dir"]))
    return 0


def cmd_digest(args, cfg):
    """`gpualert digest`: one message about the runs of the last --since (24h): counts, time
    lost, suspect nodes, what still waits in the outbox; through the run messages' path
    (build_message, then the transport, or the outbox). Nothing is sent when there were no
    runs, unless --always. 0 if sent (or saved by --dry-run) or nothing to send, else 1."""
    now, since = time.time(), (DIGEST_SINCE_S if args.since is None else args.since)
    runs = select_runs(_known_runs(cfg, now), now, since)
    digest = make_digest(runs, now, since, undelivered=len(waiting_items(cfg)))
    subject = digest_subject(digest)
    if not runs and not args.always:
        print("gpualert: digest: no runs in the last %s; nothing sent (--always sends one)" %
              format_duration(since))
        return 0
    result = make_result("DIGEST", "digest", argv=["gpualert", "digest"], host=_hostname(short=True),
                         cwd=_getcwd(), start=now - since, end=now, digest=digest)
    msg, _ = build_message(result, cfg)
    out = deliver_capped(msg, cfg, capped=False)  # a daily digest is never held by the cap
    print("gpualert: %s: %s" % (subject[len("[gpualert] "):], _delivery_where(out)))
    return 0 if out["outcome"] in ("sent", "dry-run") else 1


def cmd_prune(args, cfg):
    """`gpualert prune --older-than DUR`: remove the run directories whose run ended longer
    ago than DUR (see prune_runs: never the outbox, a running run, or one a waiting message
    names); --dry-run lists them. 0, or 1 if some could not be removed."""
    done = prune_runs(cfg["log_dir"], time.time() - args.older_than, keep=waiting_run_dirs(cfg),
                      dry_run=cfg["dry_run"], warn=_warn)
    verb = "would remove" if cfg["dry_run"] else "removed"
    for path, size, end in done["removed"]:
        if cfg["dry_run"]:
            print("%s %s (ended %s, %s)" % (verb, path, _format_time(end), _format_size(size)))
    freed = sum(size for _, size, _ in done["removed"])
    kept = "; ".join("%d %s" % (n, why) for why, n in sorted(done["kept"].items()))
    print("gpualert: prune: %s %d run director%s older than %s, %s %s%s" % (
        verb, len(done["removed"]), "y" if len(done["removed"]) == 1 else "ies",
        format_duration(args.older_than), "freeing" if cfg["dry_run"] else "freed",
        _format_size(freed), "; kept %s" % kept if kept else ""))
    for line in done["failed"]:
        _warn("prune: could not remove %s" % line)
    return 1 if done["failed"] else 0


def cmd_run(cli, cfg, sources, problems):
    """Run the command; return its exit status whatever happens to the notification."""
    run = Run(cli.command, cfg, problems, notify_explicit=sources.get("notify", "default") != "default")
    return run.execute()


def cmd_config(cli, cfg, sources, problems):
    """Print the effective configuration, secrets masked, with where each value came from."""
    for key in sorted(k for k in cfg if k != "config_broken"):
        value = cfg[key]
        if key in SECRET_KEYS and value:
            value = "********"
        if key == "notify_url":
            value = [mask_url(url) for url in value]
        if isinstance(value, list):
            value = ",".join(value)
        if key == "budget" and isinstance(value, int):
            value = "%s (%d bytes)" % (_format_size(value), value)
        print("%-14s = %-40s (%s)" % (key, "" if value is None else value, sources.get(key, "default")))
    for line in effective_delivery_lines(cfg):
        print(line)
    for problem in problems:
        print("problem: %s" % problem)
    return 0


def effective_delivery_lines(cfg):
    """What a run would really do with a message: the transport and the recipients, with
    the defaults resolved (a blank `to` is the local user; a blank sendmail may be found)."""
    kind, where = _choose_transport(cfg)
    return ["", "would deliver: %s %s" % (kind, where),
            "would send to: %s" % ", ".join(_recipients(cfg)),
            "would send from: %s" % _from_addr(cfg, _hostname())]


# ==== CLI: command line ====

SUBCOMMANDS = ("run", "classify", "watch", "resend", "runs", "digest", "prune", "test-email",
               "test-notify", "config", "help")
# Extra options of some subcommands: (flag, key, kind, metavar, help).
SUB_OPTIONS = {
    "classify": (("--exit-code", "exit_code", "int", "N", "the exit code (negative: signal)"),
                 ("--json", "json", "flag", "", "one JSON object a line")),
    "watch": (("--interval", "interval", "seconds", "SECONDS", "poll interval (60)"),
              ("--give-up", "give_up", "duration", "DURATION",
               "stop after the scheduler fails to answer this long (10m)"),
              ("--scheduler", "scheduler", "choice:auto|slurm|sge", "KIND",
               "slurm, sge, or auto (default: the first that knows the job)")),
    "runs": (("--since", "since", "duration", "DURATION", "only runs that ended in the last DURATION (24h, 7d)"),
             ("--failed", "failed", "flag", "", "only runs that did not end well"),
             ("--node", "node", "str", "NODE", "only runs on NODE"),
             ("--job", "job", "str", "ID", "only the runs of scheduler job ID (4242, 4242_7)"),
             ("--json", "json", "flag", "", "one JSON object a line")),
    "digest": (("--since", "since", "duration", "DURATION", "the period (24h)"),
               ("--always", "always", "flag", "", "send a digest even with no runs")),
    "prune": (("--older-than", "older_than", "duration", "DURATION",
               "remove run directories that ended longer ago (30d)"),),
}
PRUNE_OLDER_THAN_S = 30 * 86400.0  # what --help says: `prune` alone keeps 30 days


class CommandLine(object):
    """What the user asked for: a subcommand, its options, and the child command."""

    def __init__(self):
        self.sub, self.flags, self.extra, self.command, self.positional = "run", {}, {}, [], []
        self.command_at = 0  # the index of the first positional among the options
        self.help = self.version = False

    def __getattr__(self, name):  # cmd_* handlers read extra options as attributes
        try:
            return self.__dict__["extra"][name]
        except KeyError:
            raise AttributeError(name)


def parse_command_line(argv):
    """Split at the first `--`; options before it, the untouched command after it."""
    cli = CommandLine()
    before, command = (argv[:argv.index("--")], argv[argv.index("--") + 1:]) if "--" in argv else (argv, None)
    if before and not before[0].startswith("-"):
        cli.sub = before.pop(0)
        if cli.sub not in SUBCOMMANDS:
            near = _did_you_mean(cli.sub, SUBCOMMANDS)
            raise UsageError("unknown subcommand %r (%s)" % (_clean(cli.sub, 40), near or (
                "to run a command, put it after --: gpualert.py -- %s" % quote_argv([cli.sub] + before))))
    _parse_options(cli, before)
    if cli.help or cli.version:
        return cli
    if cli.sub == "run":
        if not command and cli.positional:
            raise UsageError("unexpected argument %r (%s)" % (
                _clean(cli.positional[0], 40), _dash_dash_hint(before, cli.command_at)))
        if not command:
            raise UsageError("no command to run (usage: gpualert.py [OPTIONS] -- CMD [ARGS...])")
        cli.command = command
    elif command is not None:
        cli.positional += command
    _check_positional(cli)
    return cli


def _parse_options(cli, tokens):
    table = dict((row[0], row) for row in RUN_OPTIONS + SUB_OPTIONS.get(cli.sub, ()))
    i = 0
    while i < len(tokens):
        token = tokens[i]
        i += 1
        if token in ("-h", "--help"):
            cli.help = True
        elif token == "--version":
            cli.version = True
        elif token.startswith("-") and token != "-":
            flag, has_value, value = token.partition("=")
            row = table.get(flag)
            if row is None:
                raise UsageError(_unknown_option(flag, table, tokens, cli))
            if not has_value and not row[2].startswith(("flag", "optpath")):
                if i >= len(tokens):
                    raise UsageError("option %s needs a value (%s)" % (flag, row[3]))
                value, i = tokens[i], i + 1
            elif not has_value and row[2] == "optpath" and i < len(tokens) \
                    and not tokens[i].startswith("-"):
                value, i = tokens[i], i + 1
            _store_option(cli, row, value if (has_value or not row[2].startswith("flag")) else "")
        else:
            if not cli.positional:
                cli.command_at = i - 1  # where a command given without -- would start
            cli.positional.append(token)


def _did_you_mean(word, choices):
    import difflib
    near = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return "did you mean %s?" % near[0] if near else ""


def _dash_dash_hint(tokens, start):
    return "to run a command, put it after --: gpualert.py %s" % quote_argv(
        tokens[:start] + ["--"] + tokens[start:])


def _unknown_option(flag, table, tokens, cli):
    """'unknown option --tiemout (did you mean --timeout?)'; after a word of a command given
    without --, how to give it: `gpualert.py --to me python -c ...` meant -c for python."""
    if flag == "--smtp-password":  # others can read a command line: only the config or the env
        return "unknown option --smtp-password (set GPUALERT_SMTP_PASSWORD or the config key smtp_password)"
    hints = [_did_you_mean(flag, list(table) + ["--help", "--version"])]
    if cli.sub == "run" and cli.positional:
        hints.append(_dash_dash_hint(tokens, cli.command_at))
    hints = [h for h in hints if h]
    return "unknown option %s%s" % (_clean(flag, 40), " (%s)" % "; ".join(hints) if hints else "")


def _store_option(cli, row, value):
    flag, key, kind = row[0], row[1], row[2]
    target = cli.extra if any(row is r for r in SUB_OPTIONS.get(cli.sub, ())) else cli.flags
    try:
        converted = value if kind == "optpath" else convert_option(kind, value)
        for url in converted if kind == "urls" else ():
            parse_channel(url)
    except ConfigError as exc:
        raise UsageError("option %s: %s" % (flag, exc))
    if kind in ("list", "urls"):
        target[key] = target.get(key, []) + converted
    elif kind == "causes":  # --requeue preempted --requeue walltime: both
        target[key] = parse_requeue_causes(",".join(target.get(key, []) + converted))
    else:
        target[key] = converted


# The forms Slurm and SGE print. Anything else is a typo: qacct/qstat read "1x" as job 1.
_JOB_ID_RE = re.compile(r"^\d+(?:[_.+]\d+|_\[[\d,%-]+\])?$")


def _check_positional(cli):
    needs = {"classify": "LOG", "watch": "JOBID"}
    if cli.sub in needs:
        if not cli.positional:
            raise UsageError("%s needs at least one %s" % (cli.sub, needs[cli.sub]))
        cli.extra["logs" if cli.sub == "classify" else "job_ids"] = list(cli.positional)
        for job_id in cli.positional if cli.sub == "watch" else ():
            if not _JOB_ID_RE.match(job_id):
                raise UsageError("watch: %r is not a job id (Slurm: 4242, 4242_7, 4242_[1-10], "
                                 "4242+1; SGE: 4242, 4242.3)" % _clean(job_id, 40))
        for key, kind in (("exit_code", None), ("json", False), ("interval", 60.0)):
            cli.extra.setdefault(key, kind)
    elif cli.sub in ("runs", "digest", "prune") and not cli.positional:
        if cli.sub == "prune":
            cli.extra.setdefault("older_than", PRUNE_OLDER_THAN_S)
        for key in ("since", "node", "job", "older_than"):
            cli.extra.setdefault(key, None)
        for key in ("failed", "json", "always"):
            cli.extra.setdefault(key, False)
    elif cli.sub == "test-notify":
        for url in cli.positional:
            try:
                parse_channel(url)
            except ConfigError as exc:
                raise UsageError(str(exc))
        cli.extra["urls"] = list(cli.positional)
    elif cli.positional:
        raise UsageError("unexpected argument %r" % cli.positional[0])


def usage_text():
    lines = [__doc__.strip().split("\n\n")[0], "", __doc__.split("\n\n")[1].strip(), "",
             "Options (config key and GPUALERT_* variable alike):"]
    for flag, key, kind, metavar, text in RUN_OPTIONS:
        lines.append("  %-28s %s" % ((flag + " " + metavar).strip(), text))
    for sub, rows in sorted(SUB_OPTIONS.items()):
        for flag, key, kind, metavar, text in rows:
            lines.append("  %-28s %s (%s)" % ((flag + " " + metavar).strip(), text, sub))
    lines += ["", "Exit status: the command's own; 128+N for signal N; 2 usage; "
              "125 internal; 126 not executable; 127 not found.",
              "Full manual: the docstring at the top of gpualert.py, and README.md."]
    return "\n".join(lines)


def cmd_help(cli, cfg, sources, problems):
    """`gpualert help`: the same text as --help."""
    print(usage_text())
    return 0


def _dispatch(cli, cfg, sources, problems):
    handler = {"run": cmd_run, "config": cmd_config, "help": cmd_help, "classify": cmd_classify,
               "resend": cmd_resend, "test-email": cmd_test_email, "test-notify": cmd_test_notify,
               "watch": cmd_watch, "runs": cmd_runs, "digest": cmd_digest, "prune": cmd_prune}[cli.sub]
    if cli.sub in ("run", "config", "help"):
        return handler(cli, cfg, sources, problems)
    return handler(cli) if cli.sub == "classify" else handler(cli, cfg)


def _open_standard_fds():
    """Put /dev/null on any of descriptors 0-2 that is closed (`gpualert.py -- cmd >&-`):
    else the first file gpualert opens (the log) takes the number, and what is meant for
    stdout or stderr lands in it."""
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
        except OSError:
            null = os.open(os.devnull, os.O_RDWR)
            if null != fd:  # lower ones are open now, so null is fd unless fd was taken
                os.dup2(null, fd)
                os.close(null)
    for name, fd in (("stdin", 0), ("stdout", 1), ("stderr", 2)):
        if getattr(sys, name) is None:  # Python leaves sys.stdout None when fd 1 was closed
            setattr(sys, name, open(fd, "r" if fd == 0 else "w", closefd=False))


def main(argv=None):
    """The CLI; returns the exit status (the console script passes it to sys.exit)."""
    _open_standard_fds()
    argv = sys.argv[1:] if argv is None else list(argv)
    try:
        cli = parse_command_line(argv)
    except UsageError as exc:
        _warn("error: %s" % exc)
        return EXIT_USAGE
    if cli.help:
        print(usage_text())
        return 0
    if cli.version:
        print("gpualert %s" % __version__)
        return 0
    try:
        cfg, sources, problems = load_config(cli.flags, os.environ)
    except UsageError as exc:  # GPUALERT_REQUEUE or the file's requeue names no known cause
        _warn("error: %s" % exc)
        return EXIT_USAGE
    for problem in problems:
        if not cfg["quiet"]:
            _warn("warning: %s" % problem)
    if cli.sub in ("run", "test-email", "resend", "digest"):  # before the child: never at the end
        cfg = check_settings(cfg, None if cfg["quiet"] else _warn)
    try:
        return _dispatch(cli, cfg, sources, problems)
    except UsageError as exc:  # found by the command itself (watch: an unknown job id)
        _warn("error: %s" % exc)
        return EXIT_USAGE
    except GpuAlertError as exc:
        _warn("error: %s" % exc)
        return EXIT_INTERNAL
    except KeyboardInterrupt:
        return 128 + signal.SIGINT
    except BrokenPipeError:  # `gpualert.py config | head`: the reader has what it wanted
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except Exception as exc:  # noqa: BLE001 - one line, not a traceback, and the 125 contract
        _warn("error: internal: %s: %s" % (type(exc).__name__, exc))
        return EXIT_INTERNAL
    finally:
        end_helpers()


if __name__ == "__main__":
    sys.exit(main())
