from common import *
cfg={"hidden":768,"heads":10}
log("config", cfg)
assert cfg["hidden"] % cfg["heads"] == 0, "hidden size must be divisible by num heads"
