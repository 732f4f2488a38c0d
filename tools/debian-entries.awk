# The machine's own Debian archive entries in deb822 .sources files (the
# "deb" stanzas whose URI ends in /debian), each written as another entry
# beside it, with the same URI, suites and Signed-By:
#   awk -v kind=deb-src  -f tools/debian-entries.awk FILE...   its sources, same components
#   awk -v kind=non-free -f tools/debian-entries.awk FILE...   contrib and non-free, where not there yet
# Used by tools/deb-src.sh and tools/non-free.sh (make deps).
function entry(type, components) {
	printf "Types: %s\nURIs: %s\nSuites: %s\nComponents: %s\n%s\n", type, uris, suites, components,
		signed != "" ? "Signed-By: " signed "\n" : ""
}
function flush() {
	if (types ~ /(^| )deb( |$)/ && uris ~ /\/debian\/?( |$)/ && uris !~ /security/) {
		if (kind == "deb-src")
			entry("deb-src", comps)
		else if (kind == "non-free" && comps !~ /(^| )non-free( |$)/)
			entry("deb", "contrib non-free")
	}
	types = uris = suites = comps = signed = ""
}
/^[ \t]*$/ { flush(); next }
/^Types:/ { sub(/^Types:[ \t]*/, ""); types = $0 }
/^URIs:/ { sub(/^URIs:[ \t]*/, ""); uris = $0 }
/^Suites:/ { sub(/^Suites:[ \t]*/, ""); suites = $0 }
/^Components:/ { sub(/^Components:[ \t]*/, ""); comps = $0 }
/^Signed-By:/ { sub(/^Signed-By:[ \t]*/, ""); signed = $0 }
END { flush() }
