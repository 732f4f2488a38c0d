# make dist: a release folder, build/dist/envlock-VERSION/, holding
#   envlock-VERSION-x86_64-linux   the static binary (debug info stripped)
#   envlock-VERSION.tar.gz         the committed source (git archive of HEAD)
#   SHA256SUMS                     sha256sum of both
#   SHA256SUMS.sig                 envlock's Ed25519 signature of SHA256SUMS (sign --file)
#   envlock-release.pub.pem        the public key that checks it
# The private key is DIST_KEY (made with envlock keygen when it does not exist
# yet; keep it, and publish the public key where users will find it).

DIST_ROOT ?= build/dist
DIST_DIR   = $(DIST_ROOT)/envlock-$(ENVLOCK_VERSION)
DIST_KEY  ?= $(HOME)/.config/envlock/release.key.pem
DIST_BIN   = envlock-$(ENVLOCK_VERSION)-x86_64-linux
DIST_SRC   = envlock-$(ENVLOCK_VERSION).tar.gz

.PHONY: dist

dist: static
	@test -n "$(ENVLOCK_VERSION)" || { echo "make dist: no version in $(ENVLOCK_VERSION_SRC)"; exit 1; }
	@git diff --quiet HEAD -- 2>/dev/null || \
	  echo "make dist: warning: the tree has uncommitted changes; the source tarball is HEAD's"
	@rm -rf $(DIST_DIR) && mkdir -p $(DIST_DIR)
	@strip --strip-debug -o $(DIST_DIR)/$(DIST_BIN) $(STATIC_BUILD)/envlock
	@git archive --format=tar --prefix=envlock-$(ENVLOCK_VERSION)/ HEAD | gzip -n -9 >$(DIST_DIR)/$(DIST_SRC)
	@if [ ! -f "$(DIST_KEY)" ]; then \
	  mkdir -p "$$(dirname "$(DIST_KEY)")" && \
	  $(STATIC_BUILD)/envlock keygen -o "$(patsubst %.key.pem,%,$(DIST_KEY))" >/dev/null && \
	  echo "make dist: made a new release key, $(DIST_KEY) (keep it)"; fi
	@openssl pkey -in "$(DIST_KEY)" -pubout -out $(DIST_DIR)/envlock-release.pub.pem
	@cd $(DIST_DIR) && sha256sum $(DIST_BIN) $(DIST_SRC) >SHA256SUMS
	@$(STATIC_BUILD)/envlock sign --file $(DIST_DIR)/SHA256SUMS --key "$(DIST_KEY)" -o $(DIST_DIR)/SHA256SUMS.sig >/dev/null
	@$(STATIC_BUILD)/envlock verify-sig --file $(DIST_DIR)/SHA256SUMS --pub $(DIST_DIR)/envlock-release.pub.pem >/dev/null
	@echo "  DIST    $(DIST_DIR)/: $$(cd $(DIST_DIR) && ls | tr '\n' ' ')"
