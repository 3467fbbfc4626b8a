"""Helpers shared by the tests: builders, fakes and fixture paths (no tests here)."""
