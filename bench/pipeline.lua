-- wrk script: each request() sends 16 pipelined GET /plaintext requests in one write.
-- wrk counts every response, so req/s stays per request. (Its latency figures are wrong
-- with pipelining; use req/s and CPU per request.)
init = function(args)
   local r = {}
   for i = 1, 16 do
      r[i] = wrk.format(nil, "/plaintext")
   end
   req = table.concat(r)
end

request = function()
   return req
end
