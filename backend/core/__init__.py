"""Plumbing every other package uses: settings, the store and its migrations, paths, limits, images, record
files, Markdown-safe text, who is asking, the GPU decorator, the environment and error helpers.

Nothing here knows about models, benchmarks or campaigns, and nothing here imports torch.
"""
