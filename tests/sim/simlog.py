"""The simulation's ground truth (SIM_LOG, JSON lines; README.md)."""
import json


class SimLog:
    def __init__(self, path):
        self.ops, self.api, self.events = [], [], []
        with open(path) as f:
            for line in f:
                e = json.loads(line)
                if e.get("ev") == "op":
                    self.ops.append(e)
                elif e.get("ev") == "api":
                    self.api.append(e)
                else:
                    self.events.append(e)

    def gpu_ops(self):
        """Kernels, copies and sets: what runs on a stream."""
        return [o for o in self.ops if o["kind"] != "sync"]

    def of(self, ev):
        return [e for e in self.events if e.get("ev") == ev]

    def lost(self, why=None):
        return sum(e["records"] for e in self.of("lost")
                   if why is None or e["why"] == why)

    def dropped(self):
        return len(self.of("dropped"))

    def api_by_corr(self):
        return {a["corr"]: a for a in self.api}
