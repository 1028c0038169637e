"""NeMo Gym resources servers as envgym environments (`nemo:URL`, plain HTTP through httpx).

The `nemo-gym` package itself needs Python >= 3.12 (0.7 needs >= 3.13), so it is not an
extra here; the client speaks the resources-server HTTP API it documents, and the tests run
it against examples/nemo/resources_server.py, a server written with FastAPI to that API."""
