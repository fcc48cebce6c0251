# derive.awk -- lab 03's printout with GB/s in MiB per ms (see `derived`)
$1 ~ /^[0-9]+$/ && ($2 == "KiB" || $2 == "MiB") && NF == 9 {
    printf "%6d %s %6d %15.2f %6.2f %15.2f %6.2f %15.2f %6.2f\n", $1, $2, $3,
        $4 / 1.048576, $5 / 1.048576, $6 / 1.048576, $7 / 1.048576, $8 / 1.048576, $9 / 1.048576
    next
}
$1 ~ /_gbps$/ && $2 == "=" {
    note = $0; sub(/^ *[^ ]+ *= *[^ ]+ */, "", note)
    printf "  %-18s = %12.4f  %s\n", $1, $3 / 1.048576, note
    next
}
{ print }
