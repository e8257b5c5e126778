"""BiVLC-style crowd annotation campaigns: assignment, quality, agreement, export, backup."""
