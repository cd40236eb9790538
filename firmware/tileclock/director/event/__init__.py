"""The event: pairings (TSH), games matched to tables, the penalty sheet, a round's results."""
