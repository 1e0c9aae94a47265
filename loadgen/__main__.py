from loadgen.cli import entry

entry()
