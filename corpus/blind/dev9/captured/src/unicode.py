with open("/tmp/b9-cap/data/latin1.txt", "wb") as f: f.write("caf\xe9 cr\xe8me\n".encode("latin-1"))
print("reading corpus shard data/latin1.txt", flush=True)
text = open("/tmp/b9-cap/data/latin1.txt", encoding="utf-8").read()
