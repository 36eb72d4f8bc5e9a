import os, time
def build_message(result, cfg):
    from email.message import EmailMessage
    m = EmailMessage(); m["Subject"] = "[gpualert] %s %s: %s" % (result.status, result.classification.cls, result.name)
    m["To"] = ", ".join(cfg["to"] or ["root"]); m["From"] = "gpualert@localhost"
    m.set_content("\n".join(result.tail)); return m, []
def save_to_outbox(msg, outbox, reason):
    os.makedirs(outbox, exist_ok=True)
    p = os.path.join(outbox, "%f.eml" % time.time()); open(p, "wb").write(msg.as_bytes()); return p
def deliver(msg, cfg):
    p = save_to_outbox(msg, cfg["outbox"], "stub")
    return {"outcome": "outbox", "transport": "outbox", "detail": "saved to outbox", "outbox_path": p}
def cmd_resend(args, cfg): return 0
def cmd_test_email(args, cfg): return 0
