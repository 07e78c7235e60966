module gocgoheap

go 1.19
