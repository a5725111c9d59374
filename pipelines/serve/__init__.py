"""`elman serve`: trained runs behind an HTTP API (FastAPI on uvicorn) and a web page.

Modules: `request` (reading and checking a predict request and its task options),
`models` (loading runs once at start), `batching` (the server-side micro-batcher),
`metrics` (Prometheus text), `reports` (the reports listing and safe file paths),
`app` (the ASGI app factory) and `server` (binding a port and running uvicorn).
Nothing here imports TensorFlow until a run is loaded.
"""
