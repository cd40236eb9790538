"""What several test modules share: fixtures and helpers, each module named for what it holds. No
test module imports another (tests/test_suite_shape.py); they import from here."""
