# The samples of a pprof profile decoded by protoc --decode=perftools.profiles.Profile, one line
# each: its values (allocations, bytes), then each label as KEY=VALUE, the strings looked up in the
# string_table (which protoc prints after the samples). For tests/cli/cli_test.sh.
/^sample \{/ { n++; nl = 0; inside = 1; next }
inside && /^  value: / { v[n] = v[n] " " $2 }
inside && /^    key: / { nl++; key[n, nl] = $2 }
inside && /^    str: / { str[n, nl] = $2 }
inside && /^\}/ { inside = 0; labels[n] = nl }
/^string_table: / { s = $0; sub(/^string_table: "/, "", s); sub(/"$/, "", s); table[strings++] = s }
END {
    for (i = 1; i <= n; i++) {
        line = substr(v[i], 2)
        for (j = 1; j <= labels[i]; j++) line = line " " table[key[i, j]] "=" table[str[i, j]]
        print line
    }
}
