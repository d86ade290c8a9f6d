"""HTTP plumbing the routers share: problem JSON, CORS, request limits, SSE, thread streams."""
