import csv
import sys

with open(sys.argv[1], newline="") as handle:
    rows = list(csv.reader(handle))
header, body = rows[0], rows[1:]
print(f"columns: {', '.join(header)}")
print(f"rows: {len(body)}")
for index, name in enumerate(header):
    missing = sum(1 for row in body if index >= len(row) or not row[index].strip())
    print(f"missing {name}: {missing}")
