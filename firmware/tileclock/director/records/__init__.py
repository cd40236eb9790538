"""Reading records back: record files and result rows, game files, facts, export, replay, pictures."""
