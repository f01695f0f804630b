"""What a run measures: every metric declared once, the metrics from call records, and the GPU
and CPU telemetry sampled beside a job."""
