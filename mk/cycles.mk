# make file-cycles: the call cycles between the files of each folder of
# lib/ (or of CYCLE_FOLDERS, when given), from the built objects; fails on
# a cycle that tools/file-cycles.allow does not explain. make
# file-cycles-test tests the tool.

CYCLE_FOLDERS ?=

.PHONY: file-cycles file-cycles-test

file-cycles: $(LIB_OBJ)
	@python3 tools/file-cycles.py -b $(BUILD) $(CYCLE_FOLDERS)

file-cycles-test:
	@sh tools/file-cycles.test.sh
