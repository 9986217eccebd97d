"""Applications that serve nomad-lab's models to other programs: the Ollama-API shim (``ollama_server``).

Why its own package, above the services: a server is an application (it owns a process, a port and an
HTTP framework), not an adapter the rest of the package calls; it composes a backend adapter into routes.
``process`` starts and stops such a server as a subprocess for tests and notebooks.
"""
