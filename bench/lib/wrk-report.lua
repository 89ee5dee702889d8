-- wrk calls done() after a run: print its numbers as one JSON line, so bench/lib/wrk.ts reads
-- numbers instead of wrk's text table. Latencies are in microseconds.
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    '\nWRK_JSON {"requests":%d,"durationUs":%d,"socketErrors":%d,"non2xx":%d,"p50Us":%d,"p99Us":%d}\n',
    summary.requests, summary.duration, e.connect + e.read + e.write + e.timeout, e.status,
    latency:percentile(50), latency:percentile(99)))
end
