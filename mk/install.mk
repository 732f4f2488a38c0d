# make install / install-strip / uninstall, GNU-style: PREFIX (default
# /usr/local) and DESTDIR, each folder derived from PREFIX and overridable
# on the command line (Debian: make install DESTDIR=debian/tmp PREFIX=/usr
# LIBDIR=/usr/lib/$(DEB_HOST_MULTIARCH)). Nothing is stripped or compressed:
# install-strip strips the binary, dh_strip and dh_compress do it for a .deb.

PREFIX       ?= $(if $(prefix),$(prefix),/usr/local)
EXEC_PREFIX  ?= $(PREFIX)
BINDIR       ?= $(EXEC_PREFIX)/bin
LIBDIR       ?= $(EXEC_PREFIX)/lib
INCLUDEDIR   ?= $(PREFIX)/include
DATAROOTDIR  ?= $(PREFIX)/share
MANDIR       ?= $(DATAROOTDIR)/man
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
BASHCOMPDIR  ?= $(DATAROOTDIR)/bash-completion/completions
# Debian's folder for zsh completions shipped by packages (zsh's own fpath has it)
ZSHCOMPDIR   ?= $(DATAROOTDIR)/zsh/vendor-completions

INSTALL         ?= install
INSTALL_PROGRAM ?= $(INSTALL) -m 755
INSTALL_DATA    ?= $(INSTALL) -m 644
INSTALL_DIR     ?= $(INSTALL) -d -m 755

# the version is the one string envlock_version() returns
ENVLOCK_VERSION_SRC := lib/util/error.c
ENVLOCK_VERSION ?= $(shell sed -n '/^const char \*envlock_version(void)/,/^}/s/.*return "\([^"]*\)";.*/\1/p' \
	$(ENVLOCK_VERSION_SRC) 2>/dev/null)

# Libs.private: what the CLI links beyond the pkg-config libraries (-lpthread -lm)
ENVLOCK_PC_LIBS_PRIVATE ?= $(strip $(filter-out $(LDFLAGS) $(PKG_LIBS),$(LIBS)))

INSTALL_MANPAGES := $(sort $(wildcard man/*.1))
INSTALL_HEADERS  := $(sort $(wildcard include/envlock/*.h))

# A pkg-config path: ${prefix}/... when it lies under PREFIX, so a .pc moved
# with its prefix (or read through PKG_CONFIG_SYSROOT_DIR) still points home.
install_pc_path = $(if $(filter $(PREFIX)/%,$(1)),$${prefix}/$(patsubst $(PREFIX)/%,%,$(1)),$(1))

.PHONY: install install-strip uninstall

# rewritten when PREFIX, LIBDIR, INCLUDEDIR or the version change, like $(BUILD)/CFLAGS
$(BUILD)/envlock.pc: FORCE
	@test -n "$(ENVLOCK_VERSION)" || \
	  { echo "make install: no version string in envlock_version() in $(ENVLOCK_VERSION_SRC)" >&2; exit 1; }
	@mkdir -p $(BUILD)
	@{ echo 'prefix=$(PREFIX)'; \
	  echo 'libdir=$(call install_pc_path,$(LIBDIR))'; \
	  echo 'includedir=$(call install_pc_path,$(INCLUDEDIR))'; \
	  echo; \
	  echo 'Name: envlock'; \
	  echo 'Description: record, compare, check and restore a GPU deep-learning machine'"'"'s stack'; \
	  echo 'Version: $(ENVLOCK_VERSION)'; \
	  echo 'Requires.private: $(PKGS)'; \
	  echo 'Cflags: -I$${includedir}'; \
	  echo 'Libs: -L$${libdir} -lenvlock'; \
	  echo 'Libs.private: $(ENVLOCK_PC_LIBS_PRIVATE)'; \
	} >$@.new; \
	if cmp -s $@.new $@; then rm -f $@.new; else mv $@.new $@; fi

FORCE:

install: $(BUILD)/envlock $(BUILD)/libenvlock.a $(BUILD)/envlock.pc
	$(INSTALL_DIR) $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(BASHCOMPDIR) \
	  $(DESTDIR)$(ZSHCOMPDIR) $(DESTDIR)$(LIBDIR) $(DESTDIR)$(INCLUDEDIR)/envlock $(DESTDIR)$(PKGCONFIGDIR)
	$(INSTALL_PROGRAM) $(INSTALL_STRIP) $(BUILD)/envlock $(DESTDIR)$(BINDIR)/envlock
	$(INSTALL_DATA) $(INSTALL_MANPAGES) $(DESTDIR)$(MANDIR)/man1/
	$(INSTALL_DATA) completion/envlock.bash $(DESTDIR)$(BASHCOMPDIR)/envlock
	$(INSTALL_DATA) completion/_envlock $(DESTDIR)$(ZSHCOMPDIR)/_envlock
	$(INSTALL_DATA) $(BUILD)/libenvlock.a $(DESTDIR)$(LIBDIR)/libenvlock.a
	$(INSTALL_DATA) $(INSTALL_HEADERS) $(DESTDIR)$(INCLUDEDIR)/envlock/
	$(INSTALL_DATA) $(BUILD)/envlock.pc $(DESTDIR)$(PKGCONFIGDIR)/envlock.pc

install-strip:
	@$(MAKE) --no-print-directory install INSTALL_STRIP=-s

# exactly what install wrote, and include/envlock when that leaves it empty
uninstall:
	rm -f $(DESTDIR)$(BINDIR)/envlock \
	  $(addprefix $(DESTDIR)$(MANDIR)/man1/,$(notdir $(INSTALL_MANPAGES))) \
	  $(DESTDIR)$(BASHCOMPDIR)/envlock $(DESTDIR)$(ZSHCOMPDIR)/_envlock \
	  $(DESTDIR)$(LIBDIR)/libenvlock.a \
	  $(addprefix $(DESTDIR)$(INCLUDEDIR)/envlock/,$(notdir $(INSTALL_HEADERS))) \
	  $(DESTDIR)$(PKGCONFIGDIR)/envlock.pc
	@if [ -d $(DESTDIR)$(INCLUDEDIR)/envlock ]; then rmdir $(DESTDIR)$(INCLUDEDIR)/envlock 2>/dev/null || \
	  echo "make uninstall: $(DESTDIR)$(INCLUDEDIR)/envlock holds other files; left in place"; fi
