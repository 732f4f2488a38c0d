# make file-cycles: the call cycles between the files of each folder of
# lib/ (or of CYCLE_FOLDERS, when given), from the built objects; fails on
# a cycle that tools/file-cycles.allow does not explain. make
# file-cycles-test tests the tool. make layers: the floors of lib/README.md,
# every include and call between folders pointing down (tools/layers.py).

CYCLE_FOLDERS ?=

.PHONY: file-cycles file-cycles-test layers

file-cycles: $(LIB_OBJ)
	@python3 tools/file-cycles.py -b $(BUILD) $(CYCLE_FOLDERS)

file-cycles-test:
	@sh tools/file-cycles.test.sh

layers: $(LIB_OBJ) $(CMD_OBJ)
	@python3 tools/layers.py -b $(BUILD)
