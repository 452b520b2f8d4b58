"""The doctor package: ``episteme doctor`` checks a setup as a whole and says what to do."""
