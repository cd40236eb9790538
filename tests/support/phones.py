"""A phone as the browser plays one: its viewport and touch."""

PHONE = {"viewport": {"width": 390, "height": 844}, "is_mobile": True, "has_touch": True}
