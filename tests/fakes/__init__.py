"""Real stand-ins for third-party services (LLM servers on 127.0.0.1), shared by the tests."""
