"""Gradio views: one module per tab. No science here; every computation lives in `backend`."""
