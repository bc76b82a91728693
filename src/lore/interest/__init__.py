"""The interest map (issue 5): interest vectors → clusters with stable ids → labels and
trends → reports. See docs/interest.md."""
