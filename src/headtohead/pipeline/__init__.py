"""The one orchestration package: every command's flow through the stages, top to bottom.

See ``docs/architecture.md``, "Packages and what flows between them".
"""
