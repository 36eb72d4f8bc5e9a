def detect_scheduler(environ): return {}
def job_rank(environ): return None
def read_cgroup_memory(pid=None): return {}
def query_end_reason(sched, start, now, time_limit=None): return (None, None)
def should_notify_rank(environ, all_ranks): return True
class GpuSampler(object):
    def __init__(self, interval=60): pass
    def start(self): pass
    def stop(self): return {}
def cmd_watch(args, cfg): return 0
