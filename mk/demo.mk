# The README's first command: the hello capsule, offline, end to end.
.PHONY: demo
demo:
	bash scripts/demo.sh
