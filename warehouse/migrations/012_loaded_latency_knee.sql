-- 012: loaded latency read honestly (issue 28). A knee is named only where the latency rises at least
-- KNEE_MIN_RISE x idle at saturation (fleetscope.analyze.inference), and it is an interval: knee_low_gb_s ..
-- knee_high_gb_s, the bandwidths of the ladder points either side of Kneedle's point. saturated_latency_ns is the
-- median latency within 10% of the peak bandwidth (the rise is it over idle); idle_source says what idle_latency_ns is: the kernel's no-load point or,
-- without one (MLC), the lightest load. Rows computed before stay NULL there until their run is derived again.
ALTER TABLE inferred_loaded_latency ADD COLUMN knee_low_gb_s DOUBLE;
ALTER TABLE inferred_loaded_latency ADD COLUMN knee_high_gb_s DOUBLE;
ALTER TABLE inferred_loaded_latency ADD COLUMN saturated_latency_ns DOUBLE;
ALTER TABLE inferred_loaded_latency ADD COLUMN idle_source VARCHAR;
