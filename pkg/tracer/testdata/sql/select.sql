SELECT o.OrderID /* c /* nested */ */, [a]]b] FROM dbo.Orders AS o WHERE o.Note = 'it''s' -- x
