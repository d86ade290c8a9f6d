"""What operators read: Prometheus metrics and structured logs."""
