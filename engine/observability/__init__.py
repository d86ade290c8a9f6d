"""What a run shows while it runs: custom stream events, traces, tool and model outcomes."""
