"""hotlaunch quickstart: run a scenario, compare two policies, plot the hot-launch latency CDF.

    pip install -r python/requirements.txt && pip install ./python
    python examples/quickstart.py [SCENARIO] [OUT.png]
"""

import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

import hotlaunch  # noqa: E402

scenario = sys.argv[1] if len(sys.argv) > 1 else "fleet-fig2-twitter"
out = sys.argv[2] if len(sys.argv) > 2 else "hot-launch-cdf.png"

# One run: the summary table and one row per launch.
r = hotlaunch.run(scenario, policies=["android"], seed=1)
print(r.summary[["policy", "hot_p50_ms", "hot_p90_ms", "launches_hot", "launches_cold", "kills_total"]])

# Two policies on the same workload.
c = hotlaunch.compare(scenario, policies=["android", "fleet"], seed=1)
print(c.launches.groupby(["policy", "kind"]).latency_ms.describe(percentiles=[0.5, 0.9])[["count", "50%", "90%"]])

fig, ax = plt.subplots(figsize=(6, 4))
for policy, l in c.launches[c.launches.kind == "hot"].groupby("policy"):
    x = l.latency_ms.sort_values().to_numpy()
    ax.step(x, [(i + 1) / len(x) for i in range(len(x))], where="post", label=policy)
ax.set_xlabel("hot launch latency (ms)")
ax.set_ylabel("fraction of hot launches")
ax.set_title(f"{scenario}: hot-launch CDF")
ax.legend()
fig.tight_layout()
fig.savefig(out)
print(f"wrote {out}")
