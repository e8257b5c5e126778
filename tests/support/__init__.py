"""Helpers the tests share (and bench/ scripts reuse): servers, browsers, fixtures, fakes, tiny models."""
