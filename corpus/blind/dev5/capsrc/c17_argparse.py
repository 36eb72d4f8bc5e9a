import argparse
p = argparse.ArgumentParser(prog="train.py")
p.add_argument("--model", required=True)
p.add_argument("--lr", type=float, default=1e-3)
p.add_argument("--batch-size", type=int, default=32)
a = p.parse_args()
